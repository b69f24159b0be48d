package natsx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrReaderGap says an OrderedReader's consumer skipped a delivery (a pull answered by a server that then died, a
// reconnect in the middle of a batch): its reader must be opened again from the last message it handled.
var ErrReaderGap = errors.New("ordered reader missed a message")

// OrderedHeartbeat is how often the server tells an idle OrderedReader that its consumer is alive. Two missed in a
// row end the reader (jetstream.ErrNoHeartbeat): a consumer whose server died is noticed within two of them.
const OrderedHeartbeat = time.Second

// OrderedConfig says what an OrderedReader reads.
type OrderedConfig struct {
	Stream  string
	Filters []string
	// After is the last sequence already handled: the reader starts after it (0: from the start of the stream).
	After uint64
	// LastPerSubject starts the reader at the last message of each filtered subject (a bucket's latest values),
	// when After is 0.
	LastPerSubject bool
	// InactiveThreshold is how long the server keeps the consumer of a reader that went away without deleting it.
	InactiveThreshold time.Duration
	// MaxMessages bounds what the client holds ahead of its reader (0: the library's default).
	MaxMessages int
}

// OrderedReader reads a stream in order with one ephemeral consumer (in memory, one replica, acknowledging
// nothing), like nats.go's ordered consumer, but it never replaces its consumer itself: anything that would make the
// library's ordered consumer do so (a gap in the deliveries, missed heartbeats, a consumer deleted) ends Next with an
// error, and the caller opens a new reader from where it is.
//
// The library's ordered consumer recreates its consumer under a lock, with requests of 10 s each and pauses
// growing to 10 s between them, for as long as the stream has no leader: after a kill -9 of the stream's leader it
// came back tens of seconds after the new leader was elected (a projection stood still 49 s), and the lock made
// Stop and Info wait as long, so no watchdog could cut it short. Opening a reader is one request the caller bounds.
type OrderedReader struct {
	js      jetstream.JetStream
	stream  string
	cons    jetstream.Consumer
	it      jetstream.MessagesContext
	lastDel uint64 // the consumer sequence of the last message handed over
}

// OpenOrdered creates the reader's consumer (one request, bounded by ctx) and starts pulling.
func OpenOrdered(ctx context.Context, js jetstream.JetStream, cfg OrderedConfig) (*OrderedReader, error) {
	cc := jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: cfg.InactiveThreshold,
	}
	if len(cfg.Filters) == 1 {
		cc.FilterSubject = cfg.Filters[0]
	} else {
		cc.FilterSubjects = cfg.Filters
	}
	switch {
	case cfg.After > 0:
		cc.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cc.OptStartSeq = cfg.After + 1
	case cfg.LastPerSubject:
		cc.DeliverPolicy = jetstream.DeliverLastPerSubjectPolicy
	}
	if cc.InactiveThreshold == 0 {
		cc.InactiveThreshold = 30 * time.Second
	}
	cons, err := js.CreateConsumer(ctx, cfg.Stream, cc)
	if err != nil {
		return nil, fmt.Errorf("open a reader of %s: %w", cfg.Stream, err)
	}
	opts := []jetstream.PullMessagesOpt{jetstream.PullHeartbeat(OrderedHeartbeat)}
	if cfg.MaxMessages > 0 {
		opts = append(opts, jetstream.PullMaxMessages(cfg.MaxMessages))
	}
	it, err := cons.Messages(opts...)
	if err != nil {
		r := &OrderedReader{js: js, stream: cfg.Stream, cons: cons}
		r.Delete()
		return nil, fmt.Errorf("read %s: %w", cfg.Stream, err)
	}
	return &OrderedReader{js: js, stream: cfg.Stream, cons: cons, it: it}, nil
}

// Next returns the next message in stream order. It fails, for good, on a gap, on missed heartbeats, or once the
// reader is stopped.
func (r *OrderedReader) Next() (jetstream.Msg, error) {
	m, err := r.it.Next()
	if err != nil {
		r.it.Stop()
		return nil, err
	}
	md, err := m.Metadata()
	if err != nil {
		r.it.Stop()
		return nil, fmt.Errorf("message metadata: %w", err)
	}
	if md.Sequence.Consumer != r.lastDel+1 {
		r.it.Stop()
		return nil, fmt.Errorf("%w: delivery %d after %d", ErrReaderGap, md.Sequence.Consumer, r.lastDel)
	}
	r.lastDel = md.Sequence.Consumer
	return m, nil
}

// Stop ends the reader: a Next waiting returns. It does not wait for the server.
func (r *OrderedReader) Stop() { r.it.Stop() }

// Consumer is the reader's consumer, for its info (what is pending, for a Watchdog).
func (r *OrderedReader) Consumer() jetstream.Consumer { return r.cons }

// Delete stops the reader and deletes its consumer, rather than leave it to expire. The deletion is sent in the
// background and bounded: a reader ends because its server died, and the caller's next reader must not wait up
// to 2 s for an answer that may never come (a consumer left behind goes at its inactive threshold).
func (r *OrderedReader) Delete() {
	if r.it != nil {
		r.it.Stop()
	}
	name := r.cons.CachedInfo().Name
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = r.js.DeleteConsumer(ctx, r.stream, name)
	}()
}
