package julepapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// mixedTask uses every kind of step: state, evaluate, an api_call tool, a prompt, if, switch, foreach,
// map-reduce, parallel (with a tool call in a branch), sleep, wait_for_input, log, and a workflow call at the end.
const mixedTask = `
name: mixed
input_schema:
  type: object
  properties: {i: {type: integer}}
  required: [i]
tools:
- name: echo
  type: api_call
  api_call: {method: POST, url: "%s/echo"}
main:
- set: {i: $ _.i}
- evaluate: {doubled: $ state.i * 2}
- tool: echo
  arguments: {n: $ state.i}
- prompt: "number {{ state.i }}"
  unwrap: true
- if: $ state.i %% 2 == 0
  then:
    evaluate: {parity: $ "even"}
  else:
    evaluate: {parity: $ "odd"}
- switch:
  - case: $ state.i %% 3 == 0
    then:
      evaluate: {three: $ True}
  - case: _
    then:
      evaluate: {three: $ False}
- foreach:
    in: $ [1, 2]
    do:
      evaluate: {f: $ _ + state.i}
- over: $ list(range(5))
  map:
    evaluate: {sq: $ _ * _}
  reduce: $ results + _.sq
  initial: 0
  parallelism: 3
- parallel:
  - evaluate: {a: $ 1}
  - tool: echo
    arguments: {n: $ 100 + state.i}
- sleep: {seconds: 1}
- wait_for_input:
    info:
      q: $ "go?"
- log: "resumed {{ _ }}"
- get: i
- workflow: finish
  arguments:
    i: $ _
    answer: $ steps[10].output
    tool: $ steps[2].output.json.n
    prompt: $ steps[3].output
    sum: $ steps[7].output
    par: $ steps[8].output[1].json.n
finish:
- return: $ _
`

// sideEffects is an API that does its work once per Idempotency-Key, as a service that honours the key does, and
// counts how often each key came.
type sideEffects struct {
	mu    sync.Mutex
	calls map[string]int
}

func (s *sideEffects) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // a call may be under way when the node dies
	s.mu.Lock()
	s.calls[r.Header.Get("Idempotency-Key")]++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"n": body["n"]})
}

// Kill -9 of the node at random points of 50 executions that use every kind of step, three times, each time
// started again on the same data: every execution ends as it would have without the crashes, each step is
// recorded once, every api call is made for one key per step (a call under way at a crash may be sent again with
// the same key, which the service honours), and every sleep ends no earlier than its time.
func TestTasksSurviveKills(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a node three times")
	}
	api := &sideEffects{calls: map[string]int{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	model := llmtest.NewServer(t)
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text("prompt: " + req.LastMessage().Content).WithDelay(time.Duration(rand.IntN(20)) * time.Millisecond)
	})
	dir := t.TempDir()
	opts := []platformtest.Option{platformtest.WithDataDir(dir), platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test"
		c.APICallHosts = []string{strings.TrimPrefix(srv.URL, "http://")}
		c.HandlerAckWait = 2 * time.Second
	})}
	n := platformtest.Start(t, opts...)
	principal, key := n.NewAccount(t, "survivor")
	// The test polls 50 executions; the account's request rate is not what it measures.
	n.SetLimits(t, principal.AccountID, 1<<30, 1<<30)
	e := &env{node: n, model: model, key: key}
	agent := e.agent(t, map[string]any{"name": "mixer", "model": "gpt-4o-mini"})
	task := e.task(t, agent, fmt.Sprintf(mixedTask, srv.URL))

	const total = 50
	ids := make([]string, total)
	for i := range ids {
		ids[i] = e.execute(t, task, map[string]any{"i": i})
	}
	resume := func(e *env) {
		for i, id := range ids {
			r := e.do(t, "GET", "/executions/"+id, nil)
			if r.status == http.StatusOK && r.obj(t)["status"] == "awaiting_input" {
				e.do(t, "PUT", "/executions/"+id, map[string]any{"status": "running", "input": map[string]any{"go": i}})
			}
		}
	}
	// The first crash comes while the executions run their first steps, the second while they sleep or wait, the
	// third right after they were told to go on.
	for crash, wait := range []int{50 + rand.IntN(250), 300 + rand.IntN(600), 20 + rand.IntN(100)} {
		if crash == 2 {
			// The third crash comes while the executions are being told to go on.
			go func(url string) {
				for i, id := range ids {
					body := strings.NewReader(fmt.Sprintf(`{"status":"running","input":{"go":%d}}`, i))
					req, _ := http.NewRequest("PUT", url+"/julep/executions/"+id, body)
					req.Header.Set("Authorization", "Bearer "+key)
					req.Header.Set("Content-Type", "application/json")
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}(e.node.URL)
		}
		time.Sleep(time.Duration(wait) * time.Millisecond)
		seen := map[string]int{}
		for _, id := range ids {
			if r := e.do(t, "GET", "/executions/"+id, nil); r.status == http.StatusOK {
				seen[fmt.Sprint(r.obj(t)["status"])]++
			}
		}
		e.node.Crash()
		t.Logf("crash %d with the executions %v", crash+1, seen)
		e = &env{node: platformtest.Start(t, opts...), model: model, key: key}
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		done := 0
		for _, id := range ids {
			if s := e.must(t, http.StatusOK, "GET", "/executions/"+id, nil)["status"]; s == "succeeded" || s == "failed" {
				done++
			}
		}
		if done == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d executions ended", done, total)
		}
		resume(e)
		time.Sleep(200 * time.Millisecond)
	}

	for i, id := range ids {
		x := e.must(t, http.StatusOK, "GET", "/executions/"+id, nil)
		want := fmt.Sprintf(`{"answer":{"go":%d},"i":%d,"par":%d,"prompt":"prompt: number %d","sum":30,"tool":%d}`, i, i, 100+i, i, i)
		got, _ := json.Marshal(x["output"])
		if x["status"] != "succeeded" || string(got) != want {
			t.Errorf("execution %d: %v %s, want %s (error %v)", i, x["status"], got, want, x["error"])
		}
		checkTransitions(t, e, principal.AccountID, id)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.calls) != 2*total {
		t.Errorf("%d idempotency keys, want %d (two api calls per execution)", len(api.calls), 2*total)
	}
	again := 0
	for _, c := range api.calls {
		again += c - 1
	}
	t.Logf("api calls sent again with their key after a crash: %d of %d", again, 2*total)
}

// checkTransitions reads an execution's log: the fold accepts it whole (no step recorded twice, none skipped), and
// the sleep ended no earlier than a second after it began.
func checkTransitions(t *testing.T, e *env, account, id string) {
	t.Helper()
	hist, _, err := e.node.Store.Load(context.Background(), events.Ref{Type: execution.Aggregate, ID: events.JulepAggregateID(account, id)})
	if err != nil {
		t.Fatal(err)
	}
	var s execution.State
	var sleepStart, sleepEnd time.Time
	for _, env := range hist {
		s.Apply(env)
		d, ok := env.Event.(events.ExecutionTransitioned)
		if !ok {
			continue
		}
		tr, _ := execution.DecodeTransition(d.Transition)
		if tr.Current.Workflow == "main" && tr.Current.Step == 8 && tr.Type == "step" {
			sleepStart = env.Time
		}
		if tr.Current.Workflow == "main" && tr.Current.Step == 9 && tr.Type == "step" {
			sleepEnd = env.Time
		}
	}
	if s.Broken != "" {
		t.Errorf("execution %s: %s", id, s.Broken)
	}
	if sleepStart.IsZero() || sleepEnd.IsZero() || sleepEnd.Sub(sleepStart) < time.Second-10*time.Millisecond {
		t.Errorf("execution %s slept from %s to %s", id, sleepStart, sleepEnd)
	}
}
