#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0-or-later
# Write two MaxMind DB files in the GeoIP2/GeoLite2 layout with MaxMind's
# own writer (Debian libmaxmind-db-writer-perl), for what the npm files do
# not have: that layout's nested paths (country.iso_code, city.names.en,
# subdivisions.0.iso_code) and integer values (autonomous_system_number).
#   geoip_write_db.pl CITY.mmdb ASN.mmdb
# Documentation ranges (RFC 5737, RFC 3849) and one public network, with
# UTF-8 names and the largest uint32.
use strict;
use warnings;
use MaxMind::DB::Writer::Tree;

my %types = (
	country => 'map', city => 'map', continent => 'map', postal => 'map',
	location => 'map', names => 'map', subdivisions => ['array', 'map'],
	iso_code => 'utf8_string', code => 'utf8_string', en => 'utf8_string',
	de => 'utf8_string', time_zone => 'utf8_string', geoname_id => 'uint32',
	autonomous_system_number => 'uint32', autonomous_system_organization => 'utf8_string',
);

sub tree {
	my ($type) = @_;
	return MaxMind::DB::Writer::Tree->new(
		ip_version => 6, record_size => 28, database_type => $type,
		# the test networks are documentation ranges, which it drops by default
		remove_reserved_networks => 0,
		languages => ['en', 'de'], description => { en => "sluice test $type" },
		map_key_type_callback => sub { $types{ $_[0] } },
	);
}

sub place {
	my ($cc, $country, $cont, $city, $sub, $postal, $tz) = @_;
	return {
		country => { iso_code => $cc, names => { en => $country }, geoname_id => 2635167 },
		continent => { code => $cont },
		city => { names => { en => $city, de => "$city (de)" } },
		subdivisions => [{ iso_code => $sub }, { iso_code => "X$sub" }],
		postal => { code => $postal },
		location => { time_zone => $tz },
	};
}

my ($city_file, $asn_file) = @ARGV;
my $city = tree('sluice-Test-City');
$city->insert_network('192.0.2.0/25', place('GB', 'United Kingdom', 'EU', 'London', 'ENG', 'SW1A', 'Europe/London'));
$city->insert_network('198.51.100.0/24', place('SE', 'Sweden', 'EU', "Link\x{f6}ping", 'E', '583 30', 'Europe/Stockholm'));
$city->insert_network('2001:db8:1::/48', place('DE', 'Germany', 'EU', "K\x{f6}ln", 'NW', '50667', 'Europe/Berlin'));
# a country without a city: city.names.en is absent
$city->insert_network('203.0.113.0/24', { country => { iso_code => 'JP', names => { en => 'Japan' } } });

my $asn = tree('sluice-Test-ASN');
$asn->insert_network('192.0.2.0/24', { autonomous_system_number => 64496, autonomous_system_organization => 'Example "Doc" Net' });
$asn->insert_network('198.51.100.0/24', { autonomous_system_number => 4294967295, autonomous_system_organization => "Bredband\x{2}2 \\AB" });
$asn->insert_network('2001:db8::/32', { autonomous_system_number => 64511, autonomous_system_organization => 'IPv6 Doc' });
$asn->insert_network('81.2.69.0/24', { autonomous_system_number => 20712, autonomous_system_organization => 'Andrews & Arnold Ltd' });

for ([$city, $city_file], [$asn, $asn_file]) {
	open(my $fh, '>:raw', $_->[1]) or die "$_->[1]: $!";
	$_->[0]->write_tree($fh);
	close($fh) or die "$_->[1]: $!";
}
