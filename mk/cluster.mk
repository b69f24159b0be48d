# The topology of docker-compose.yml as processes on loopback (internal/clustertest): three nats-servers built from
# the version go.mod requires and two Contrail nodes, under load, through the faults of issue 16. Included from the
# top Makefile. `make test` runs its short version (one fault) with every other test.

.PHONY: test-cluster

## test-cluster: each fault five times (kill -9 of the EVENTS leader, kill -9 of the sweeper's node, SIGTERM of another
## NATS server) and the figures: write stall p50/max, failed writes, lost or repeated replies and runs, how long a
## dead node's work waits, queries/s and runs/s on 2 nodes and on 1 (about 15 minutes)
test-cluster:
	CONTRAIL_CLUSTER_FULL=1 $(GO) test -count=1 -v -timeout 60m -run '^TestCluster$$' $(GOTESTFLAGS) ./internal/clustertest/
