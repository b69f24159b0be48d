package runworker

import "sync"

// driving is the set of runs whose lock this node's worker holds. The sweeper sees only when a run last changed, and
// a turn may wait on its model longer than the sweeper's stall: Kick leaves a run in this set alone, rather than
// spend a slot and a refused lock on it every sweep. A count, not a flag: a driver whose lock was lost may still be
// unwinding when another driver of this node takes the run again (and the lock's value tells the two takings apart,
// so that the first does not renew the second's key as its own: takingHolder).
type driving struct {
	mu   sync.Mutex
	runs map[string]int
}

func newDriving() *driving { return &driving{runs: map[string]int{}} }

// add puts the run in the set until the returned function is called.
func (d *driving) add(runID string) (remove func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.runs[runID]++
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.runs[runID]--; d.runs[runID] <= 0 {
			delete(d.runs, runID)
		}
	}
}

func (d *driving) has(runID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.runs[runID] > 0
}
