/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kafka_mock: a Kafka cluster for tests, librdkafka's mock cluster (it
 * speaks the real protocol on loopback ports).  No Kafka broker is packaged
 * for Debian; durability and failover of a real cluster are not tested.
 *
 *   kafka_mock [-f] [-b BROKERS] [-p PARTITIONS] TOPIC[:PARTITIONS]...
 *
 * Creates the cluster (3 brokers by default) and the topics (-p or their
 * own count of partitions, 1 by default; replication
 * factor 1: each partition has one leader and no follower), prints
 * "bootstrap HOST:PORT,..." and one "leader TOPIC PARTITION BROKER" line per
 * partition, then "ready", and serves until stdin closes (so a test that
 * dies, even by SIGKILL, leaves no mock behind) or, with -f, until killed.
 * Commands on stdin, one per line, each answered "ok" or "error ...":
 *   down N              broker N stops answering (rd_kafka_mock_broker_set_down)
 *   up N                broker N is back
 *   down all / up all   every broker at once (an outage of the whole cluster)
 *   err TOPIC CODE COUNT  the next COUNT produce requests fail with CODE
 *                       (a Kafka error code, e.g. 2 CORRUPT_MESSAGE)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define RD_KAFKAP_Produce 0	/* the ApiKey of Produce requests */

static int nbrokers = 3;

/* Every broker down (or up); the first error. */
static rd_kafka_resp_err_t set_all(rd_kafka_mock_cluster_t *mc, bool down)
{
	rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;

	for (int b = 1; b <= nbrokers; b++) {
		rd_kafka_resp_err_t e = down ? rd_kafka_mock_broker_set_down(mc, b)
					     : rd_kafka_mock_broker_set_up(mc, b);

		if (e && !err)
			err = e;
	}
	return err;
}

static int command(rd_kafka_mock_cluster_t *mc, char *line)
{
	char topic[256];
	int n, code, count;
	rd_kafka_resp_err_t err;

	if (!strcmp(line, "down all\n")) {
		err = set_all(mc, true);
	} else if (!strcmp(line, "up all\n")) {
		err = set_all(mc, false);
	} else if (sscanf(line, "down %d", &n) == 1) {
		err = rd_kafka_mock_broker_set_down(mc, n);
	} else if (sscanf(line, "up %d", &n) == 1) {
		err = rd_kafka_mock_broker_set_up(mc, n);
	} else if (sscanf(line, "err %255s %d %d", topic, &code, &count) == 3 && count > 0) {
		/* the mock queues request errors per cluster and API, not per topic */
		rd_kafka_resp_err_t *errs = calloc((size_t)count, sizeof(*errs));

		if (!errs)
			return -1;
		for (int i = 0; i < count; i++)
			errs[i] = (rd_kafka_resp_err_t)code;
		rd_kafka_mock_push_request_errors_array(mc, RD_KAFKAP_Produce, (size_t)count, errs);
		free(errs);
		err = RD_KAFKA_RESP_ERR_NO_ERROR;
	} else {
		printf("error: unknown command\n");
		return 0;
	}
	if (err)
		printf("error %s\n", rd_kafka_err2str(err));
	else
		printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	int partitions = 1, opt;
	bool forever = false;
	rd_kafka_conf_t *conf;
	rd_kafka_mock_cluster_t *mc;
	rd_kafka_t *rk;
	char errstr[512], line[512];

	while ((opt = getopt(argc, argv, "b:fp:")) != -1) {
		if (opt == 'f')
			forever = true;
		else if (opt == 'b')
			nbrokers = atoi(optarg);
		else if (opt == 'p')
			partitions = atoi(optarg);
		else
			return 2;
	}
	if (optind >= argc || nbrokers < 1 || partitions < 1) {
		fprintf(stderr, "usage: kafka_mock [-f] [-b BROKERS] [-p PARTITIONS] TOPIC[:PARTITIONS]...\n");
		return 2;
	}
	conf = rd_kafka_conf_new();
	/* the handle only hosts the cluster; keep its logging quiet */
	rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr));
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (!rk) {
		fprintf(stderr, "kafka_mock: %s\n", errstr);
		return 1;
	}
	mc = rd_kafka_mock_cluster_new(rk, nbrokers);
	if (!mc) {
		fprintf(stderr, "kafka_mock: cannot create the mock cluster\n");
		return 1;
	}
	for (int i = optind; i < argc; i++) {
		char *colon = strchr(argv[i], ':');
		int np = partitions;

		if (colon) {
			*colon = 0;
			np = atoi(colon + 1);
			if (np < 1)
				return 2;
		}
		if (rd_kafka_mock_topic_create(mc, argv[i], np, 1)) {
			fprintf(stderr, "kafka_mock: cannot create topic %s\n", argv[i]);
			return 1;
		}
		/* leaders spread over the brokers, and known to the test */
		for (int p = 0; p < np; p++) {
			int leader = 1 + (p + i - optind) % nbrokers;

			rd_kafka_mock_partition_set_leader(mc, argv[i], p, leader);
			printf("leader %s %d %d\n", argv[i], p, leader);
		}
	}
	printf("bootstrap %s\nready\n", rd_kafka_mock_cluster_bootstraps(mc));
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (command(mc, line) < 0)
			break;
		fflush(stdout);
	}
	while (forever)
		pause();
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(rk);
	return 0;
}
