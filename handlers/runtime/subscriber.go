package runtime

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go/jetstream"
)

// subscriber is a watermill Subscriber over JetStream pull consumers. It replaces watermill-nats' own, which closes
// a subscription's output channel while a delivery may still be sending on it: a data race whenever a node stops
// under load, and a "send on closed channel" panic when the two meet. Here a subscription stops in order: deliveries
// waiting to hand a message over give up (and hand it back to the server), only then is the channel closed.
type subscriber struct {
	js        jetstream.JetStream
	consumer  func(ctx context.Context, js jetstream.JetStream, topic string) (jetstream.Consumer, error)
	unmarshal func(jetstream.Msg) (*message.Message, error)
	nakDelay  time.Duration
	// drainTimeout bounds how long a stop waits for deliveries in hand to be answered.
	drainTimeout time.Duration
	// workers is how many deliveries of one pull are handled at once; the consumer's callback waits for a free
	// worker, which holds further deliveries in the client (at most the pull's batch) and keeps the rest on the
	// server for other nodes. With one, the callback waits for the handler's answer.
	workers int
	// pulls is how many pulls (nats.go Consume calls, each with its own pull request) one subscription makes on
	// the consumer at most: a handler whose workers each ask for an event only when free has a pull per busy
	// worker and a few more (pullSet), all of them handing over on one subscription, so that the router runs one
	// handler and the consumer is created (and its config written by the server) once per node rather than once
	// per worker.
	pulls int
	// shrinkEvery is how often a subscription whose pulls grow with the work lets go of those it no longer needs.
	shrinkEvery time.Duration
	opts        []jetstream.PullConsumeOpt
	log         *slog.Logger

	closing   chan struct{}
	closeOnce sync.Once
	stopped   sync.WaitGroup
}

// defaultShrinkPullsEvery: long enough that a handler's pulls do not come and go between the bursts of steady work.
const defaultShrinkPullsEvery = 10 * time.Second

// subscription is one Subscribe call's output and the lock that keeps sends and the close apart.
type subscription struct {
	out     chan *message.Message
	stop    chan struct{} // closed first: nothing new is handed over
	abandon chan struct{} // closed if draining takes too long: stop waiting for handlers' answers
	workers chan struct{} // one token per delivery handed over and not yet answered
	// waitAnswer: each pull serves one worker, so its callback waits for the handler's answer.
	waitAnswer bool
	pulls      *pullSet
	// answering counts the deliveries handed over whose answer is not yet sent to the server.
	answering sync.WaitGroup

	mu     sync.RWMutex // held shared while handing over, exclusively to close out
	closed bool
}

func (s *subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	select {
	case <-s.closing:
		return nil, fmt.Errorf("subscribe to %s: subscriber closed", topic)
	default:
	}
	cons, err := s.consumer(ctx, s.js, topic)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	workers, pulls := max(1, s.workers), max(1, s.pulls)
	sub := &subscription{out: make(chan *message.Message), stop: make(chan struct{}), abandon: make(chan struct{}),
		workers: make(chan struct{}, workers*pulls), waitAnswer: workers == 1}
	ps := newPullSet(cons, pulls, sub.waitAnswer, s.opts, func(p *pull, msg jetstream.Msg) { s.deliver(ctx, sub, p, msg) },
		topic, s.log)
	sub.pulls = ps
	if err := ps.start(); err != nil {
		cancel()
		return nil, fmt.Errorf("consume %s: %w", topic, err)
	}
	go ps.manage(sub.stop, cmp.Or(s.shrinkEvery, defaultShrinkPullsEvery))
	s.stopped.Add(1)
	go func() {
		defer s.stopped.Done()
		defer cancel()
		select {
		case <-ctx.Done():
		case <-s.closing:
		}
		close(sub.stop)
		// Drain rather than stop: deliveries the client already holds reach deliver, which hands them back at
		// once, and those being handled are answered as their handler answers (the runtime cancels their work
		// first); dropped, either would wait out its ack wait on the server before another node could take it.
		drained := ps.drain()
		deadline := time.NewTimer(s.drainTimeout)
		defer deadline.Stop()
		select {
		case <-drained:
			// Nothing more is handed over: wait, in the same time, for the handlers' answers to reach the server.
			answered := make(chan struct{})
			go func() {
				sub.answering.Wait()
				close(answered)
			}()
			select {
			case <-answered:
				fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), s.drainTimeout)
				if err := s.js.Conn().FlushWithContext(fctx); err != nil {
					s.log.Warn("handlers: answers not confirmed by the server; some events may be handled again", "err", err)
				}
				fcancel()
			case <-deadline.C:
			}
		case <-deadline.C:
			s.log.Warn("handlers: consumer did not drain in time; what it held comes back after its ack wait", "timeout", s.drainTimeout)
		}
		close(sub.abandon)
		sub.mu.Lock()
		sub.closed = true
		close(sub.out)
		sub.mu.Unlock()
	}()
	return sub.out, nil
}

// deliver hands one delivery to the router and answers the server as the handler answers the message. It runs on
// the consumer's callback goroutine and waits there while every worker of the subscription is busy; with several
// workers on one pull the answer is awaited in a goroutine of its own, so one pull per node serves all of a handler's
// workers and the server keeps one pull request for them rather than one per worker, which it would walk on every
// event.
func (s *subscriber) deliver(ctx context.Context, sub *subscription, p *pull, msg jetstream.Msg) {
	ps := sub.pulls
	ps.begin(p)
	defer ps.end(p)
	m, err := s.unmarshal(msg)
	if err != nil {
		s.log.Error("handlers: cannot read delivery; handed back", "subject", msg.Subject(), "err", err)
		_ = msg.NakWithDelay(s.nakDelay)
		return
	}
	select {
	case sub.workers <- struct{}{}:
	case <-sub.stop:
		_ = msg.NakWithDelay(s.nakDelay)
		return
	case <-s.closing:
		_ = msg.NakWithDelay(s.nakDelay)
		return
	}
	mctx, cancel := context.WithCancel(ctx)
	m.SetContext(mctx)

	sub.mu.RLock()
	handed := false
	if !sub.closed && !s.isClosing() {
		select {
		case sub.out <- m:
			handed = true
		case <-sub.stop:
		case <-s.closing: // the subscriber is closing: its other subscriptions stop as this one does
		}
	}
	if handed {
		sub.answering.Add(1) // under the lock: the stop waits for answers only once no more can be handed over
	}
	sub.mu.RUnlock()
	if !handed {
		cancel()
		<-sub.workers
		// Stopping: another node, or this one after its restart, takes it. With a delay: handed back at once, the
		// server would give it straight back to this subscription while it drains, and again, until the event
		// looked poisonous.
		_ = msg.NakWithDelay(s.nakDelay)
		return
	}
	answer := func() {
		defer sub.answering.Done()
		defer func() { <-sub.workers }()
		defer cancel()
		s.answer(sub, m, msg)
	}
	if sub.waitAnswer {
		// One worker: the callback waits for the answer, so the client asks the server for more only once the
		// worker is free (nats.go counts a delivery as held until its callback returns).
		answer()
		return
	}
	go answer()
}

// answer tells the server what the handler made of a delivery.
func (s *subscriber) answer(sub *subscription, m *message.Message, msg jetstream.Msg) {
	select {
	case <-m.Acked():
		// Not waited for: a confirmed ack costs the server a reply and the node a round trip on every event, and
		// losing one only hands the event over again, which every handler takes as already done. A stop flushes
		// the connection once the answers are sent, so that those of a handler that finished reach the server.
		if err := msg.Ack(); err != nil {
			s.log.Warn("handlers: ack not sent; the event may be handled again", "subject", msg.Subject(), "err", err)
		}
	case <-m.Nacked():
		if err := msg.NakWithDelay(s.nakDelay); err != nil {
			s.log.Warn("handlers: nak not sent; the event comes back after its ack wait", "subject", msg.Subject(), "err", err)
		}
	case <-sub.abandon:
		// The handler did not answer while stopping; the runtime hands back what is unanswered once the router
		// has closed.
	}
}

func (s *subscriber) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// Close stops every subscription and waits until their channels are closed.
func (s *subscriber) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.stopped.Wait()
	return nil
}
