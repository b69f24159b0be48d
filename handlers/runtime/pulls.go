package runtime

import (
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pullSet is a subscription's pulls on its consumer (nats.go Consume calls). A handler whose workers each ask for an
// event only when free (Prefetch 1) has a pull per busy worker, so that a node never holds an event it cannot start:
// but a pull costs the node three goroutines and its heartbeats, and the server a waiting request, whether or not
// work comes. So the set grows with the work instead: it keeps a few idle pulls beyond the busy ones (headroom), up
// to one per worker, and lets the surplus go once the work has ebbed for a while. An idle node then holds a pull or
// two per such handler, not one per worker (64 for the responder, the task engine's effects, Code Shot queries).
//
// A set of one pull, or of pulls that each serve many workers, stays as it starts.
type pullSet struct {
	cons    jetstream.Consumer
	opts    []jetstream.PullConsumeOpt
	deliver func(*pull, jetstream.Msg)
	log     *slog.Logger
	topic   string
	max     int  // one pull per worker at most
	elastic bool // pulls come and go with the work

	mu      sync.Mutex
	active  []*pull // pulls asking the server for events
	retired []*pull // pulls let go, draining
	busy    int     // deliveries in hand, on active and retired pulls
	peak    int     // the most busy since the set last shrank
	stopped bool    // the subscription stops: no pull is added
	grow    chan struct{}
	managed chan struct{} // closed when manage returns
}

// pull is one Consume call on the set's consumer.
type pull struct {
	cc   jetstream.ConsumeContext
	busy bool // its callback holds a delivery (one at a time: nats.go calls a Consume's callback serially)
}

func newPullSet(cons jetstream.Consumer, pulls int, elastic bool, opts []jetstream.PullConsumeOpt,
	deliver func(*pull, jetstream.Msg), topic string, log *slog.Logger) *pullSet {
	return &pullSet{cons: cons, opts: opts, deliver: deliver, log: log, topic: topic, max: pulls,
		elastic: elastic && pulls > 1, grow: make(chan struct{}, 1), managed: make(chan struct{})}
}

// start makes the first pulls: all of them, unless the set is elastic.
func (ps *pullSet) start() error {
	n := ps.max
	if ps.elastic {
		n = ps.target(0)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for range n {
		if err := ps.addLocked(); err != nil {
			for _, p := range ps.active {
				p.cc.Stop()
			}
			ps.active = nil
			return err
		}
	}
	return nil
}

// target is how many pulls the set keeps while busy deliveries are in hand: each busy one, and headroom for the
// next ones to start without waiting for a pull to be made (a burst then grows the set by half again at each step).
func (ps *pullSet) target(busy int) int {
	return min(ps.max, busy+1+busy/2)
}

func (ps *pullSet) addLocked() error {
	p := &pull{}
	cc, err := ps.cons.Consume(func(msg jetstream.Msg) { ps.deliver(p, msg) }, ps.opts...)
	if err != nil {
		return err
	}
	p.cc = cc
	ps.active = append(ps.active, p)
	return nil
}

// begin and end bracket a delivery in hand on p; begin asks for more pulls when the headroom is gone.
func (ps *pullSet) begin(p *pull) {
	if !ps.elastic {
		return
	}
	ps.mu.Lock()
	p.busy = true
	ps.busy++
	ps.peak = max(ps.peak, ps.busy)
	short := len(ps.active) < ps.target(ps.busy)
	ps.mu.Unlock()
	if short {
		select {
		case ps.grow <- struct{}{}:
		default: // a request to grow is pending: it counts the busy as they are then
		}
	}
}

func (ps *pullSet) end(p *pull) {
	if !ps.elastic {
		return
	}
	ps.mu.Lock()
	p.busy = false
	ps.busy--
	ps.mu.Unlock()
}

// manage grows the set when begin asks, and every shrinkEvery lets go of the idle pulls beyond what the busiest
// moment since the last look needed. It returns when stop is closed; the subscription's stop then drains them all.
func (ps *pullSet) manage(stop <-chan struct{}, shrinkEvery time.Duration) {
	defer close(ps.managed)
	if !ps.elastic {
		return // nothing to grow or shrink: the set stays as it started
	}
	tick := time.NewTicker(shrinkEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			ps.halt()
			return
		case <-ps.grow:
			ps.growToTarget()
		case <-tick.C:
			ps.shrink()
		}
	}
}

func (ps *pullSet) halt() {
	ps.mu.Lock()
	ps.stopped = true
	ps.mu.Unlock()
}

func (ps *pullSet) growToTarget() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for !ps.stopped && len(ps.active) < ps.target(ps.busy) {
		if err := ps.addLocked(); err != nil {
			// The pulls there are go on; the next busy delivery asks again.
			ps.log.Warn("handlers: cannot add a pull; the node takes no more events at once until it can", "topic", ps.topic,
				"pulls", len(ps.active), "err", err)
			return
		}
	}
}

// shrink drains idle pulls beyond the target of the busiest moment since the last look. Drained, not stopped: a
// delivery the server sent before it saw the pull go still reaches its callback and is handled, rather than waiting
// out its ack wait on the server.
func (ps *pullSet) shrink() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	excess := len(ps.active) - max(ps.target(ps.peak), ps.target(ps.busy))
	ps.peak = ps.busy
	kept := ps.active[:0]
	for _, p := range ps.active {
		if excess > 0 && !p.busy {
			p.cc.Drain()
			ps.retired = append(ps.retired, p)
			excess--
			continue
		}
		kept = append(kept, p)
	}
	clear(ps.active[len(kept):])
	ps.active = kept
	// Forget the retired pulls that have drained.
	live := ps.retired[:0]
	for _, p := range ps.retired {
		select {
		case <-p.cc.Closed():
		default:
			live = append(live, p)
		}
	}
	clear(ps.retired[len(live):])
	ps.retired = live
}

// drain stops every pull once manage has returned, and returns a channel closed when all have drained, retired ones
// included.
func (ps *pullSet) drain() <-chan struct{} {
	<-ps.managed
	ps.mu.Lock()
	all := append(append([]*pull(nil), ps.active...), ps.retired...)
	for _, p := range ps.active {
		p.cc.Drain()
	}
	ps.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		for _, p := range all {
			<-p.cc.Closed()
		}
		close(drained)
	}()
	return drained
}
