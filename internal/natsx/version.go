package natsx

import (
	"fmt"
	"strconv"
	"strings"
)

// MinServerVersion is the oldest nats-server Contrail runs against. What needs it:
//   - 2.10: consumers with several filter subjects (handlers, projections, followers);
//   - 2.11: batched direct gets (every aggregate load), per-key TTLs on KV buckets (leases, usage counters), the
//     expected-last-sequence check over a wildcard subject (one check per aggregate);
//   - 2.12: message schedules (durable timers: a task's sleep, a run's expiry) and atomic batch publish.
//
// An older server fails in ways that say nothing of the cause ("key not found" reading a bucket, consumers refused
// in a loop), so a node checks the version when it connects and refuses to start below this one.
const MinServerVersion = "2.12.0"

// CheckServerVersion refuses a server older than MinServerVersion, naming what it lacks.
func CheckServerVersion(version string) error {
	if version == "" {
		return fmt.Errorf("nats-server did not report its version; Contrail needs %s or newer", MinServerVersion)
	}
	if compareVersions(version, MinServerVersion) < 0 {
		return fmt.Errorf("nats-server %s is too old: Contrail needs %s or newer (consumers with several filters "+
			"need 2.10; batched direct gets and per-key TTLs 2.11; message schedules and atomic batches 2.12): "+
			"upgrade the server, or run `contrail serve` without --nats-url to use the embedded one", version, MinServerVersion)
	}
	return nil
}

// compareVersions compares two dotted versions ("2.11.4", "v2.12.0-RC.1") by their numeric parts.
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < 3; i++ {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) [3]int {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+ "); i >= 0 {
		v = v[:i]
	}
	var out [3]int
	for i, p := range strings.SplitN(v, ".", 3) {
		out[i], _ = strconv.Atoi(p)
	}
	return out
}
