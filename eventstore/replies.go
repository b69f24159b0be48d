package eventstore

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// replies receives the answers to the store's multi-message requests (batched direct gets) on one wildcard inbox
// subscription, and hands each to the request it belongs to. A subscription per request would cost the server a
// SUB and an UNSUB, and the client a channel of its default pending size (64k messages), on every load.
type replies struct {
	nc     *nats.Conn
	once   sync.Once
	err    error
	prefix string // "<inbox>." ; a request's reply subject is prefix + its number
	next   atomic.Uint64

	mu      sync.Mutex
	waiting map[string]chan *nats.Msg
}

func newReplies(nc *nats.Conn) *replies {
	return &replies{nc: nc, waiting: map[string]chan *nats.Msg{}}
}

// open subscribes the wildcard inbox, once.
func (r *replies) open() error {
	r.once.Do(func() {
		r.prefix = r.nc.NewRespInbox() + "."
		_, r.err = r.nc.Subscribe(r.prefix+"*", r.dispatch)
		if r.err != nil {
			r.err = fmt.Errorf("subscribe the store's reply inbox: %w", r.err)
		}
	})
	return r.err
}

func (r *replies) dispatch(m *nats.Msg) {
	r.mu.Lock()
	ch := r.waiting[m.Subject]
	r.mu.Unlock()
	if ch == nil {
		return // a late answer to a request that gave up
	}
	select {
	case ch <- m:
	default:
		// More answers than a batch holds: the request reads what it asked for and ends at the end-of-batch
		// marker, so an overflow can only be a misbehaving server. Dropping it makes the request time out and retry.
	}
}

// expect registers a request: it returns the reply subject to send it with, the channel its answers arrive on
// (room for `size`), and what to call when done.
func (r *replies) expect(size int) (string, <-chan *nats.Msg, func(), error) {
	if err := r.open(); err != nil {
		return "", nil, nil, err
	}
	subject := r.prefix + strconv.FormatUint(r.next.Add(1), 36)
	ch := make(chan *nats.Msg, size)
	r.mu.Lock()
	r.waiting[subject] = ch
	r.mu.Unlock()
	return subject, ch, func() {
		r.mu.Lock()
		delete(r.waiting, subject)
		r.mu.Unlock()
	}, nil
}
