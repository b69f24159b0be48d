package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/ids"
)

// ResponsesOptions sizes the Responses benchmark.
type ResponsesOptions struct {
	// Dir is an empty directory for the node's data.
	Dir string
	// Responses is the number of responses, one after another, for the latency figures.
	Responses int
	// Clients is the number of clients creating responses at once for the throughput figure.
	Clients int
	// Duration is how long the throughput figure is measured.
	Duration time.Duration
	// Frames is the length of the stream the replay figure reads.
	Frames int
}

// Responses measures the Responses API on a whole node in-process, over HTTP, with the offline model: a streamed
// response from its create request to response.completed, the time to the first SSE byte, responses/s with many
// clients, and the replay of a long stream (GET ?stream=true). Each latency is set beside a raw JetStream
// publish acknowledged by the same node, and the replay beside raw JetStream reading as many messages.
func Responses(ctx context.Context, o ResponsesOptions, progress func(string)) (Report, error) {
	if o.Responses == 0 {
		o.Responses = 200
	}
	if o.Clients == 0 {
		o.Clients = 100
	}
	if o.Duration == 0 {
		o.Duration = 10 * time.Second
	}
	if o.Frames == 0 {
		o.Frames = 1000
	}
	step := func(s string) {
		if progress != nil {
			progress(s)
		}
	}
	node, err := startNode(ctx, o.Dir)
	if err != nil {
		return Report{}, err
	}
	defer node.stop()
	rep := Report{Title: fmt.Sprintf("contrail bench responses: the Responses API on one in-process node over HTTP, offline model; %d sequential responses, %d clients for %s, a %d-frame replay",
		o.Responses, o.Clients, o.Duration, o.Frames)}
	const body = `{"model":"offline","input":"What can you do?","stream":true}`
	for i := 0; i < 10; i++ {
		if _, err := node.streamedResponse(ctx, body); err != nil {
			return rep, fmt.Errorf("warm up: %w", err)
		}
	}
	step("raw JetStream publishes")
	raw, err := rawPublishes(ctx, node, o.Responses)
	if err != nil {
		return rep, err
	}
	rawP50 := Percentile(raw, 50)

	step("sequential streamed responses")
	var total, first []time.Duration
	for i := 0; i < o.Responses; i++ {
		r, err := node.streamedResponse(ctx, body)
		if err != nil {
			return rep, err
		}
		total, first = append(total, r.completed), append(first, r.firstByte)
	}
	f := latency("response create -> completed, p50", Percentile(total, 50), rawP50)
	f.Note = "POST /v1/responses with stream:true until response.completed arrives; raw: one JetStream publish acknowledged"
	rep.Figures = append(rep.Figures, f,
		latency("response create -> completed, p99", Percentile(total, 99), Percentile(raw, 99)))
	f = latency("time to the first SSE byte, p50", Percentile(first, 50), rawP50)
	f.Note = "from sending the request to the first byte of response.created"
	rep.Figures = append(rep.Figures, f, latency("time to the first SSE byte, p99", Percentile(first, 99), Percentile(raw, 99)))

	step(fmt.Sprintf("%d clients at once", o.Clients))
	n, d, err := node.concurrentResponses(ctx, o.Clients, o.Duration)
	if err != nil {
		return rep, err
	}
	rep.Figures = append(rep.Figures, Figure{Name: fmt.Sprintf("responses completed with %d clients at once", o.Clients),
		Value: float64(n) / d.Seconds(), Unit: "responses/s",
		Note: "each client POSTs a response (not streamed), reads it completed, and makes the next"})

	step(fmt.Sprintf("replay of a %d-frame stream", o.Frames))
	id, err := node.longResponse(ctx, o.Frames)
	if err != nil {
		return rep, err
	}
	var replays []time.Duration
	frames := 0
	for i := 0; i < 20; i++ {
		start := time.Now()
		frames, err = node.replay(ctx, id)
		if err != nil {
			return rep, err
		}
		replays = append(replays, time.Since(start))
	}
	rawRead, err := rawReads(ctx, node, frames)
	if err != nil {
		return rep, err
	}
	f = latency(fmt.Sprintf("replay of a %d-event stream, p50", frames), Percentile(replays, 50), rawRead)
	f.Note = "GET /v1/responses/{id}?stream=true read to its end; raw: an ordered consumer reading as many messages"
	rep.Figures = append(rep.Figures, f)
	return rep, nil
}

// streamedResponse creates a streamed response and reads it to its end.
func (b *benchNode) streamedResponse(ctx context.Context, body string) (runTimes, error) {
	return b.streamTimes(ctx, "/v1/responses", body, "response", "response.completed",
		"response.failed", "response.incomplete", "error")
}

// concurrentResponses keeps `clients` clients busy with one response after another for d.
func (b *benchNode) concurrentResponses(ctx context.Context, clients int, d time.Duration) (int64, time.Duration, error) {
	return keepBusy(clients, d, func(int) error {
		_, err := b.create(ctx, "/v1/responses", `{"model":"offline","input":"What can you do?"}`, http.StatusOK)
		return err
	})
}

// longResponse records a response whose stream has about `frames` frames: a message streamed in one-byte pieces.
// It records the turn itself, right after the creation; should the loop answer first (it reacts to the creation
// too), the response is made again.
func (b *benchNode) longResponse(ctx context.Context, frames int) (string, error) {
	for attempt := 0; attempt < 5; attempt++ {
		id, ok, err := b.tryLongResponse(ctx, frames)
		if err != nil || ok {
			return id, err
		}
	}
	return "", fmt.Errorf("the loop answered every long response first")
}

func (b *benchNode) tryLongResponse(ctx context.Context, frames int) (string, bool, error) {
	rs := b.p.Commands.Responses
	actor, err := b.principal(ctx)
	if err != nil {
		return "", false, err
	}
	id := events.NewPrefixedID(ids.Response.Prefix)
	// Only the loop answers a created response; this one is made and ended here, so the loop finds it ended.
	if _, err := rs.Create(ctx, actor, id, events.ResponseCreated{Model: "offline", Store: true, Background: true,
		Input: []events.Item{{Type: "message", Role: "user", Content: []events.ItemContent{{Type: "input_text", Text: "long"}}}}}); err != nil {
		return "", false, err
	}
	s, err := rs.Load(ctx, id, 0)
	if err != nil {
		return "", false, err
	}
	if s, err = rs.Start(ctx, s); err != nil {
		return "", false, err
	}
	n := max(frames-10, 1)
	text := strings.Repeat("x", n)
	chunks := make([]int, n)
	for i := range chunks {
		chunks[i] = 1
	}
	item := events.Item{Type: "message", ID: "msg_" + events.NewID(), Status: events.ResponseStatusCompleted, Role: "assistant",
		Content: []events.ItemContent{{Type: "output_text", Text: text}}, Chunks: chunks}
	s, err = rs.RecordTurn(ctx, s, s.Turns, []events.Item{item}, events.TokenUsage{}, response.End{Status: events.ResponseStatusCompleted}, true)
	if err != nil {
		return "", false, err
	}
	return id, len(s.Output) == 1 && s.Output[0].ID == item.ID, nil
}

// principal is the bench account's principal.
func (b *benchNode) principal(ctx context.Context) (auth.Principal, error) {
	return b.p.Auth.Authenticate(ctx, b.key)
}

// replay reads a response's stream from its start to its end and counts its frames.
func (b *benchNode) replay(ctx context.Context, id string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url+"/v1/responses/"+id+"?stream=true", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+b.key)
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if bytes.HasPrefix(line, []byte("data: {")) {
			n++
		}
		if err != nil {
			return n, nil
		}
	}
}

// rawPublishes times n JetStream publishes, each acknowledged before the next, on the node's own connection.
func rawPublishes(ctx context.Context, b *benchNode, n int) ([]time.Duration, error) {
	payload, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 200)})
	subject := b.p.Layout.Names.EventSubject("benchraw", "x", "published")
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := b.p.JS.Publish(ctx, subject, payload); err != nil {
			return nil, fmt.Errorf("raw publish: %w", err)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// rawReads times an ordered consumer reading n messages of one subject.
func rawReads(ctx context.Context, b *benchNode, n int) (time.Duration, error) {
	subject := b.p.Layout.Names.EventSubject("benchraw", "replay", "published")
	for i := 0; i < n; i++ {
		if _, err := b.p.JS.PublishAsync(subject, []byte(`{"delta":"x"}`)); err != nil {
			return 0, err
		}
	}
	select {
	case <-b.p.JS.PublishAsyncComplete():
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	start := time.Now()
	cons, err := b.p.JS.OrderedConsumer(ctx, b.p.Layout.Names.EventsStream(), jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return 0, err
	}
	it, err := cons.Messages()
	if err != nil {
		return 0, err
	}
	defer it.Stop()
	for i := 0; i < n; i++ {
		if _, err := it.Next(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
