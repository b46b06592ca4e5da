# SPDX-License-Identifier: GPL-2.0-or-later
# Test certificates made with openssl into the folder $C: `ca NAME` makes
# a self-signed CA (NAME.key, NAME.pem), `leaf NAME CA SAN EKU` a key and
# a certificate signed by CA with that subjectAltName and extendedKeyUsage.
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() {	# ca NAME
	key "$C/$1.key"
	openssl req -x509 -new -key "$C/$1.key" -out "$C/$1.pem" -days 2 -subj "/CN=$1" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
leaf() {	# leaf NAME CA SAN EKU
	key "$C/$1.key"
	openssl req -new -key "$C/$1.key" -out "$C/$1.csr" -subj "/CN=$1"
	printf 'subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n' "$3" "$4" >"$C/$1.ext"
	openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.pem" -CAkey "$C/$2.key" -CAcreateserial \
		-out "$C/$1.pem" -days 2 -extfile "$C/$1.ext" 2>/dev/null
}
