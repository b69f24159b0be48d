package main

import "testing"

func TestMemoryLimitIsHalfOfTheCgroupsOrTheMachines(t *testing.T) {
	meminfo := "MemTotal:       24731708 kB\nMemFree:        22756492 kB\n"
	for _, c := range []struct {
		name, cgroup, meminfo string
		want                  int64
	}{
		{"cgroup limit", "2147483648\n", meminfo, 1 << 30},
		{"cgroup without a limit", "max\n", meminfo, 24731708 * 1024 / 2},
		{"no cgroup file", "", meminfo, 24731708 * 1024 / 2},
		{"nothing known", "", "", 0},
		{"meminfo in another unit", "", "MemTotal: 24 GB\n", 0},
	} {
		if got := memoryLimit(c.cgroup, c.meminfo); got != c.want {
			t.Errorf("%s: memoryLimit = %d, want %d", c.name, got, c.want)
		}
	}
}
