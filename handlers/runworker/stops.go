package runworker

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/internal/natsx"
)

// stops hands the events that may end a turn (stopEvents) to the turns in progress on this node, by thread. The node
// listens once, on every thread, rather than once per run: a subscription made and dropped for every run makes the
// server insert it into its subject index and then sweep it out of the index's cache, which cost more than all the
// rest of the run's messages. Such events are rare, so hearing every thread's costs little.
//
// It listens to the events as published, before the log stores them: a turn hears of a cancel at once, and reads
// the thread until it holds it (Worker.afterStop).
type stops struct {
	names natsx.Names
	subs  []*nats.Subscription

	mu       sync.Mutex
	byThread map[string]map[*signal]struct{}
}

// stopEvents are the names of the thread events after which a turn's model call is no longer wanted.
var stopEvents = []string{"run_cancelling", "run_cancelled", "run_expired", "run_failed", "deleted"}

func listenForStops(nc *nats.Conn, names natsx.Names) (*stops, error) {
	st := &stops{names: names, byThread: map[string]map[*signal]struct{}{}}
	for _, name := range stopEvents {
		sub, err := nc.Subscribe(names.EventSubject("thread", "*", name), st.heard)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("run worker: listen for %s: %w", name, err)
		}
		st.subs = append(st.subs, sub)
	}
	return st, nil
}

func (st *stops) heard(m *nats.Msg) {
	_, thread, _, ok := st.names.SplitEventSubject(m.Subject) // the subscriptions hear stopEvents only
	if !ok {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for s := range st.byThread[thread] {
		s.fire()
	}
}

// add lets a turn of the thread hear its stops until the returned function is called.
func (st *stops) add(thread string, s *signal) (remove func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	set := st.byThread[thread]
	if set == nil {
		set = map[*signal]struct{}{}
		st.byThread[thread] = set
	}
	set[s] = struct{}{}
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		delete(set, s)
		if len(set) == 0 {
			delete(st.byThread, thread)
		}
	}
}

func (st *stops) close() {
	for _, sub := range st.subs {
		_ = sub.Unsubscribe()
	}
}
