/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ruleset of the rule index's tests as nft's JSON listing of it (nft
 * 1.0.6's `nft -j -a list ruleset`, the comment of rule 12 edited to hold
 * escapes): test_rule_index.c reads it, test_rule_index_nl.c builds the
 * same ruleset as netlink messages and wants the same index.
 */
#ifndef SLUICE_TEST_RULE_LISTING_H
#define SLUICE_TEST_RULE_LISTING_H

static const char listing[] =
	"{\"nftables\": ["
	"{\"metainfo\": {\"version\": \"1.0.6\", \"release_name\": \"Lester Gooch #5\", \"json_schema_version\": 1}}, "
	"{\"table\": {\"family\": \"inet\", \"name\": \"t\", \"handle\": 1}}, "
	"{\"map\": {\"family\": \"inet\", \"name\": \"vm\", \"table\": \"t\", \"type\": \"inet_service\", \"handle\": 7, \"map\": \"verdict\", \"elem\": [[80, {\"jump\": {\"target\": \"viamap\"}}]]}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"sub\", \"handle\": 1}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"viamap\", \"handle\": 2}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"deep\", \"handle\": 3}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"lonely\", \"handle\": 4}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"input\", \"handle\": 5, \"type\": \"filter\", \"hook\": \"input\", \"prio\": 0, \"policy\": \"accept\"}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"output\", \"handle\": 6, \"type\": \"filter\", \"hook\": \"output\", \"prio\": 0, \"policy\": \"accept\"}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"sub\", \"handle\": 8, \"expr\": [{\"log\": {\"prefix\": \"sub\", \"group\": 5}}, {\"drop\": null}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"viamap\", \"handle\": 9, \"expr\": [{\"log\": {\"prefix\": \"vm\", \"group\": 5}}, {\"accept\": null}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"deep\", \"handle\": 10, \"expr\": [{\"log\": {\"prefix\": \"deep\", \"group\": 5}}, {\"goto\": {\"target\": \"sub\"}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"lonely\", \"handle\": 11, \"expr\": [{\"log\": {\"prefix\": \"lonely\", \"group\": 5}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"input\", \"handle\": 12, \"comment\": \"ssh \\\"in\\\" \\u00e9\", \"expr\": [{\"match\": {\"op\": \"==\", \"left\": {\"payload\": {\"protocol\": \"tcp\", \"field\": \"dport\"}}, \"right\": 22}}, {\"counter\": {\"packets\": 0, \"bytes\": 0}}, {\"log\": {\"prefix\": \"in \", \"group\": 5}}, {\"accept\": null}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"input\", \"handle\": 13, \"expr\": [{\"jump\": {\"target\": \"sub\"}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"input\", \"handle\": 14, \"expr\": [{\"match\": {\"op\": \"==\", \"left\": {\"payload\": {\"protocol\": \"ip\", \"field\": \"saddr\"}}, \"right\": \"1.2.3.4\"}}, {\"log\": {\"prefix\": \"x\", \"group\": 5}}, {\"reject\": {\"type\": \"icmp\", \"expr\": \"port-unreachable\"}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"input\", \"handle\": 16, \"expr\": [{\"vmap\": {\"key\": {\"meta\": {\"key\": \"l4proto\"}}, \"data\": {\"set\": [[\"tcp\", {\"jump\": {\"target\": \"deep\"}}]]}}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"input\", \"handle\": 17, \"expr\": [{\"vmap\": {\"key\": {\"payload\": {\"protocol\": \"tcp\", \"field\": \"dport\"}}, \"data\": \"@vm\"}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"input\", \"handle\": 18, \"expr\": [{\"log\": {\"prefix\": \"same\", \"group\": 6}}, {\"continue\": null}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"input\", \"handle\": 19, \"expr\": [{\"log\": {\"prefix\": \"same\", \"group\": 6}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"output\", \"handle\": 20, \"expr\": [{\"log\": {\"prefix\": \"in \", \"group\": 5}}]}}, "
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"output\", \"handle\": 21, \"expr\": [{\"log\": {\"prefix\": \"j\", \"group\": 5}}, {\"jump\": {\"target\": \"sub\"}}]}}, "
	"{\"table\": {\"family\": \"ip\", \"name\": \"t4\", \"handle\": 2}}, "
	"{\"chain\": {\"family\": \"ip\", \"table\": \"t4\", \"name\": \"input\", \"handle\": 1, \"type\": \"filter\", \"hook\": \"input\", \"prio\": 0, \"policy\": \"accept\"}}, "
	"{\"rule\": {\"family\": \"ip\", \"table\": \"t4\", \"chain\": \"input\", \"handle\": 2, \"expr\": [{\"log\": {\"prefix\": \"printk\"}}]}}, "
	"{\"rule\": {\"family\": \"ip\", \"table\": \"t4\", \"chain\": \"input\", \"handle\": 3, \"expr\": [{\"log\": {\"prefix\": \"pé\", \"group\": 7}}]}}, "
	"{\"rule\": {\"family\": \"ip\", \"table\": \"t4\", \"chain\": \"input\", \"handle\": 4, \"expr\": [{\"log\": {\"prefix\": \"v4\", \"group\": 7}}, {\"return\": null}]}}"
	"]}";

#endif
