// SPDX-License-Identifier: GPL-2.0-or-later
// Decode the requests a test receiver saved (otlp_receiver.py) with the
// protobufjs root of @opentelemetry/otlp-transformer, not with sluice's
// encoder: protobuf bodies with ExportLogsServiceRequest.decode, OTLP/JSON
// bodies with JSON.parse then fromObject (the proto3 JSON mapping: int64
// as strings, bytes as base64), gzip undone by zlib when the request said
// Content-Encoding: gzip.  Prints one JSON object per log record, in
// request order: {path, encoding, gzip, resource, scope, time, observed,
// severity, severityText, body, attrs: {key: {int|str|bytes: value}}}.
//   node otlp_decode.js ROOT_JS DIR
const fs = require('fs'), path = require('path'), zlib = require('zlib');
const root = require(process.argv[2]);
const Req = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
const dir = process.argv[3];
const conv = { longs: String, bytes: String, enums: Number, defaults: false };

function canon(x) {
	if (Array.isArray(x)) return '[' + x.map(canon).join(',') + ']';
	if (x && typeof x === 'object')
		return '{' + Object.keys(x).sort().map(k => JSON.stringify(k) + ':' + canon(x[k])).join(',') + '}';
	return JSON.stringify(x);
}
function value(v) {
	if (v.intValue !== undefined) return { int: String(v.intValue) };
	if (v.stringValue !== undefined) return { str: v.stringValue };
	if (v.bytesValue !== undefined) return { bytes: v.bytesValue };
	return { other: v };
}
function kvs(list) {
	const o = {};
	for (const kv of list || []) {
		if (kv.key in o) throw new Error('attribute ' + kv.key + ' twice');
		o[kv.key] = value(kv.value);
	}
	return o;
}

for (const f of fs.readdirSync(dir).filter(f => f.endsWith('.head')).sort()) {
	const head = JSON.parse(fs.readFileSync(path.join(dir, f)));
	let body = fs.readFileSync(path.join(dir, f.replace(/\.head$/, '.body')));
	const gz = head.headers['content-encoding'] === 'gzip';
	if (gz) body = zlib.gunzipSync(body);
	const ctype = head.headers['content-type'];
	let msg;
	if (ctype === 'application/x-protobuf') {
		msg = Req.decode(body);
	} else if (ctype === 'application/json') {
		const obj = JSON.parse(body.toString('utf8'));
		msg = Req.fromObject(obj);
		// fromObject ignores what it does not know: the message written back in
		// the proto3 JSON mapping must be the body itself, key for key
		const back = Req.toObject(msg, { longs: String, bytes: String, enums: Number, json: true });
		if (canon(back) !== canon(obj))
			throw new Error(f + ': OTLP/JSON body differs from its decoded message:\n' +
					canon(obj).slice(0, 400) + '\n' + canon(back).slice(0, 400));
	} else {
		throw new Error(f + ': content-type ' + ctype);
	}
	const o = Req.toObject(msg, conv);
	for (const rl of o.resourceLogs || [])
		for (const sl of rl.scopeLogs || [])
			for (const lr of sl.logRecords || [])
				console.log(JSON.stringify({
					path: head.path, encoding: ctype, gzip: gz,
					headers: head.headers,
					resource: kvs(rl.resource && rl.resource.attributes),
					scope: sl.scope || {},
					time: lr.timeUnixNano, observed: lr.observedTimeUnixNano,
					severity: lr.severityNumber, severityText: lr.severityText,
					body: lr.body ? lr.body.stringValue : undefined,
					attrs: kvs(lr.attributes),
				}));
}
