package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/platform"
)

// CodeShotOptions sizes the Code Shot benchmark.
type CodeShotOptions struct {
	Dir     string
	Queries int
}

// stopwatch adds up the time spent in one kind of call.
type stopwatch struct {
	mu    sync.Mutex
	total time.Duration
}

func (s *stopwatch) add(d time.Duration) {
	s.mu.Lock()
	s.total += d
	s.mu.Unlock()
}

func (s *stopwatch) take() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.total
	s.total = 0
	return d
}

// timedModel times every model call.
type timedModel struct {
	llm.Provider
	w *stopwatch
}

func (m timedModel) Complete(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	start := time.Now()
	defer func() { m.w.add(time.Since(start)) }()
	return m.Provider.Complete(ctx, req, onDelta)
}

// CodeShot measures what the platform adds to a Code Shot query beyond the model and the func: queries to the
// genrand agent (one func call, two model calls each, offline model), posted one after another's answer; for each,
// the time from posting to the reply being in the session, minus the model's time (timed around every call) and
// the func's (timed inside the agent). The rest is the platform: the log appends of every step, the session
// runner, the HTTP call's overhead, loading the session. Directly to the agent, and through the front agent (which
// adds routing).
func CodeShot(ctx context.Context, o CodeShotOptions, progress func(string)) (Report, error) {
	if o.Queries == 0 {
		o.Queries = 200
	}
	model, fn := &stopwatch{}, &stopwatch{}
	cfg := config.Defaults()
	cfg.DataDir, cfg.NATSListen = o.Dir, "off"
	p, err := platform.Start(ctx, cfg, platform.Options{Logger: slog.New(slog.DiscardHandler),
		WrapModels: func(m llm.Provider) llm.Provider { return timedModel{Provider: m, w: model} }})
	if err != nil {
		return Report{}, err
	}
	defer p.Stop(context.Background())
	a := genrand.Agent(genrand.WithSeed(1, 2))
	inner := a.Funcs["genrand"]
	a.Funcs["genrand"] = func(ctx context.Context, c agentkit.Call) (agentproto.Message, error) {
		start := time.Now()
		defer func() { fn.add(time.Since(start)) }()
		return inner(ctx, c)
	}
	h, err := agentkit.New(a)
	if err != nil {
		return Report{}, err
	}
	agent := httptest.NewServer(h)
	defer agent.Close()
	admin := auth.Principal{AccountID: commands.AdminAccountID, Username: "admin"}
	url := agent.URL
	if _, err := p.RegisterAgent(ctx, admin, commands.AgentInput{Handle: "genrand", FuncURL: &url}); err != nil {
		return Report{}, err
	}
	rep := Report{Title: fmt.Sprintf("contrail bench codeshot: %d genrand queries each way (1 func call, 2 model calls), offline model", o.Queries)}
	for _, front := range []string{"genrand", "fixie"} {
		if progress != nil {
			progress("queries to " + front)
		}
		s, err := p.SessionCommands.Create(ctx, admin, commands.NewSession{FrontendAgent: front})
		if err != nil {
			return rep, err
		}
		var overhead, total []time.Duration
		var modelSum, fnSum time.Duration
		for i := 0; i < o.Queries+5; i++ {
			model.take()
			fn.take()
			start := time.Now()
			posted, err := p.SessionCommands.Post(ctx, admin, commands.NewSessionMessage{Session: s.ID, Text: "Generate a random number between 5 and 50"})
			if err != nil {
				return rep, err
			}
			if err := waitReply(ctx, p, s.ID, posted.Message.ID, posted.Seq); err != nil {
				return rep, err
			}
			d, m, f := time.Since(start), model.take(), fn.take()
			if i < 5 {
				continue // warm-up
			}
			total = append(total, d)
			overhead = append(overhead, d-m-f)
			modelSum += m
			fnSum += f
		}
		n := time.Duration(o.Queries)
		rep.Figures = append(rep.Figures,
			Figure{Name: "to " + front + ": post → reply recorded, p50", Value: ms(Percentile(total, 50)), Unit: "ms"},
			Figure{Name: "to " + front + ": model time per query, mean", Value: ms(modelSum / n), Unit: "ms"},
			Figure{Name: "to " + front + ": func time per query, mean", Value: ms(fnSum / n), Unit: "ms"},
			Figure{Name: "to " + front + ": platform overhead per query, p50", Value: ms(Percentile(overhead, 50)), Unit: "ms"},
			Figure{Name: "to " + front + ": platform overhead per query, p99", Value: ms(Percentile(overhead, 99)), Unit: "ms"},
		)
	}
	return rep, nil
}

// waitReply waits until the session's log holds the answer to a message (posted at sequence from).
func waitReply(ctx context.Context, p *platform.Platform, session, message string, from uint64) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for e, err := range p.Store.FollowAggregate(ctx, events.Ref{Type: "session", ID: session}, from) {
		if err != nil {
			return err
		}
		switch d := e.Event.(type) {
		case events.SessionReplyPosted:
			if d.InReplyTo == message {
				return nil
			}
		case events.SessionReplyFailed:
			if d.InReplyTo == message {
				return fmt.Errorf("query failed: %s", d.Error)
			}
		}
	}
	return ctx.Err()
}
