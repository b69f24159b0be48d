package julepapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// waitExecution polls an execution until its status is one of want (or the test's patience ends) and returns it.
func (e *env) waitExecution(t testing.TB, id string, want ...string) map[string]any {
	t.Helper()
	// A bound on liveness, not on speed: after a node dies the other takes its work over, and under -race on two
	// cores five executions of a 200-item map-reduce can take longer than half a minute.
	deadline := time.Now().Add(90 * time.Second)
	var last map[string]any
	for time.Now().Before(deadline) {
		last = e.must(t, http.StatusOK, "GET", "/executions/"+id, nil)
		for _, w := range want {
			if last["status"] == w {
				return last
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("execution %s is %v, want %v: %v", id, last["status"], want, last)
	return nil
}

// task makes a task of agent from YAML and returns its ID.
func (e *env) task(t testing.TB, agent, yaml string) string {
	t.Helper()
	r := e.do(t, "POST", "/agents/"+agent+"/tasks", yaml, "Content-Type: application/yaml")
	if r.status != http.StatusCreated {
		t.Fatalf("create task: %d %s", r.status, r.body)
	}
	return r.obj(t)["id"].(string)
}

func (e *env) execute(t testing.TB, task string, input any) string {
	t.Helper()
	return e.must(t, http.StatusCreated, "POST", "/tasks/"+task+"/executions", map[string]any{"input": input})["id"].(string)
}

func TestTaskRunsToItsOutput(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, map[string]any{"name": "runner"})
	task := e.task(t, agent, `
name: count
input_schema:
  type: object
  properties:
    n: {type: integer}
  required: [n]
main:
- evaluate: {n: $ _.n + 1}
- if: $ _.n > 1
  then:
    evaluate: {n: $ _.n * 10}
  else:
    evaluate: {n: 0}
- foreach:
    in: $ [1, 2, 3]
    do:
      evaluate: {x: $ _ * 2}
- over: $ [1, 2, 3, 4]
  map:
    evaluate: {sq: $ _ * _}
  reduce: $ results + [_.sq]
  initial: $ []
- return:
    first: $ steps[1].output.n
    doubled: $ [o.x for o in steps[2].output]
    squares: $ _
`)
	id := e.execute(t, task, map[string]any{"n": 4})
	x := e.waitExecution(t, id, "succeeded", "failed")
	if x["status"] != "succeeded" {
		t.Fatalf("execution: %v", x)
	}
	out := fmt.Sprint(x["output"])
	if out != "map[doubled:[2 4 6] first:50 squares:[1 4 9 16]]" {
		t.Errorf("output %s", out)
	}
	tr := e.must(t, http.StatusOK, "GET", "/executions/"+id+"/transitions?limit=999", nil)
	list := items(t, tr)
	if len(list) < 10 || list[0]["type"] != "init" || list[len(list)-1]["type"] != "finish" {
		t.Errorf("%d transitions, first %v, last %v", len(list), list[0]["type"], list[len(list)-1]["type"])
	}
	one := e.must(t, http.StatusOK, "GET", "/executions/"+id+"/transitions/"+list[1]["id"].(string), nil)
	if one["id"] != list[1]["id"] || one["execution_id"] != id {
		t.Errorf("transition %v", one)
	}
	ex := items(t, e.must(t, http.StatusOK, "GET", "/tasks/"+task+"/executions", nil))
	if len(ex) != 1 || ex[0]["id"] != id || ex[0]["status"] != "succeeded" {
		t.Errorf("executions %v", ex)
	}
}

func TestTaskRefusals(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, map[string]any{"name": "runner"})
	r := e.do(t, "POST", "/agents/"+agent+"/tasks", "name: bad\nmain:\n- foreach:\n    in: $ [1]\n    do:\n      frobnicate: 1\n",
		"Content-Type: application/yaml")
	status, msg, body := errorOf(t, r)
	if status != http.StatusBadRequest || body["field"] != "main[0].foreach.do" || !strings.Contains(msg, "frobnicate") {
		t.Errorf("unknown step: %d %q %v", status, msg, body)
	}
	task := e.task(t, agent, "name: t\ninput_schema:\n  type: object\n  properties:\n    n: {type: integer}\n  required: [n]\nmain:\n- evaluate: {x: $ 1 / _.n}\n")
	r = e.do(t, "POST", "/tasks/"+task+"/executions", map[string]any{"input": map[string]any{"n": "four"}})
	status, msg, body = errorOf(t, r)
	if status != http.StatusBadRequest || body["field"] != "input.n" {
		t.Errorf("bad input: %d %q %v", status, msg, body)
	}
	// An expression that fails at run time fails the execution, naming the step and the expression.
	id := e.execute(t, task, map[string]any{"n": 0})
	x := e.waitExecution(t, id, "failed", "succeeded")
	if x["status"] != "failed" || !strings.Contains(fmt.Sprint(x["error"]), "main[0]") {
		t.Errorf("division by zero: %v", x)
	}
	if r := e.do(t, "GET", "/executions/"+strings.Repeat("a", 4000), nil); r.status != http.StatusBadRequest {
		t.Errorf("long id: %d", r.status)
	}
	_, other := e.node.NewAccount(t, "other")
	if r := e.doAs(t, other, "GET", "/executions/"+id, nil); r.status != http.StatusNotFound {
		t.Errorf("another account reads the execution: %d %s", r.status, r.body)
	}
}

func TestTaskWaitsForInputAndIsCancelled(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, map[string]any{"name": "runner"})
	task := e.task(t, agent, `
name: ask
main:
- wait_for_input:
    info: {question: "what now?"}
- evaluate: {answer: $ _.reply}
- wait_for_input:
    info: {question: "again?"}
`)
	id := e.execute(t, task, map[string]any{})
	e.waitExecution(t, id, "awaiting_input")
	e.must(t, http.StatusOK, "PUT", "/executions/"+id, map[string]any{"status": "running", "input": map[string]any{"reply": "go"}})
	e.waitExecution(t, id, "awaiting_input")
	list := items(t, e.must(t, http.StatusOK, "GET", "/executions/"+id+"/transitions", nil))
	if got := list[2]; got["type"] != "resume" {
		t.Errorf("transition 2: %v", got)
	}
	x := e.must(t, http.StatusOK, "PUT", "/executions/"+id, map[string]any{"status": "cancelled"})
	if x["status"] != "cancelled" {
		t.Errorf("cancel: %v", x)
	}
	if r := e.do(t, "PUT", "/executions/"+id, map[string]any{"status": "running", "input": 1}); r.status != http.StatusConflict {
		t.Errorf("resume a cancelled execution: %d %s", r.status, r.body)
	}
}

// seedTask is seed 004's example task, as written there.
const seedTask = `
# An example Task definition
name: Daily Motivation
input_schema:
  about_user:
    type: string
  topics:
    type: array
    items:
      type: string

tools:
- function:
  name: send_email
  # ...
  
main:
# Pick a random topic.
# ` + "`evaluate`" + ` step takes a key-value object where the values are valid python *expressions*.
- evaluate:
    chosen_topic: _["topics"][randint(len(_["topics"]))]
    
# Think about what support the user might need.
# Note: ` + "`inputs` and `outputs`" + ` are globals.
- prompt: You are a motivational coach and you are coaching someone who is {{inputs[0]["about_user"]}}. Think of the challenges they might be facing on the {{_["chosen_topic"]}} topic and what to do about them. Write down your answer as a bulleted list.

# Write a poem about it.
# Note: ` + "`_`" + ` stands for ` + "`outputs[-1]`" + ` i.e. the last step's output
- prompt: Write a short motivational poem about {{_["choices"][0].content}}

# Manually call the send_email function.
# ` + "`arguments`" + ` is an object where values are python expressions.
- tool:
    name: send_email
    arguments:
      subject: '"Daily Motivation"'
      content: _["choices"][0].content
      
# Sleep for a day
- sleep: 24*3600  

# Start all over again
- workflow: main  
  arguments: inputs[0]
`

func TestSeedTaskRunsAsWritten(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, map[string]any{"name": "coach", "model": "gpt-4o-mini"})
	task := e.task(t, agent, seedTask)
	e.model.Enqueue(llmtest.Text("- sleep more\n- walk daily"), llmtest.Text("Walk on, and rest."))
	id := e.execute(t, task, map[string]any{"about_user": "a night nurse", "topics": []string{"sleep"}})
	x := e.waitExecution(t, id, "awaiting_input", "failed")
	if x["status"] != "awaiting_input" {
		t.Fatalf("execution: %v", x)
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].LastMessage().Content, "a night nurse") ||
		!strings.Contains(reqs[0].LastMessage().Content, "on the sleep topic") ||
		!strings.Contains(reqs[1].LastMessage().Content, "poem about - sleep more") {
		t.Fatalf("the prompts: %+v", reqs)
	}
	// The function tool waits for the client, with the call as the wait's output.
	list := items(t, e.must(t, http.StatusOK, "GET", "/executions/"+id+"/transitions?limit=999", nil))
	wait := list[len(list)-1]
	call, _ := wait["output"].(map[string]any)
	fn, _ := call["function"].(map[string]any)
	if wait["type"] != "wait" || fn["name"] != "send_email" || fmt.Sprint(fn["arguments"]) != "map[content:Walk on, and rest. subject:Daily Motivation]" {
		t.Fatalf("the tool step's wait: %v", wait)
	}
	// The client sends the email and resumes; the execution sleeps a day on a durable timer.
	e.must(t, http.StatusOK, "PUT", "/executions/"+id, map[string]any{"status": "running", "input": map[string]any{"sent": true}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := e.node.Timers(t)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d timers set, want 1 (a day's sleep)", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if x := e.must(t, http.StatusOK, "GET", "/executions/"+id, nil); x["status"] != "running" {
		t.Errorf("sleeping: %v", x)
	}
	e.must(t, http.StatusOK, "PUT", "/executions/"+id, map[string]any{"status": "cancelled"})
}

func TestTaskToolsAndShortSleep(t *testing.T) {
	var mu sync.Mutex
	keys := map[string]int{}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"city": %q, "temp": 21}`, r.URL.Query().Get("city"))
	}))
	t.Cleanup(api.Close)
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.APICallHosts = []string{strings.TrimPrefix(api.URL, "http://")} }))
	agent := e.agent(t, map[string]any{"name": "weather"})
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{"title": "Umbrella", "content": "Take an umbrella in Lisbon."})
	task := e.task(t, agent, `
name: weather
tools:
- name: forecast
  type: api_call
  api_call: {method: GET, url: "`+api.URL+`/forecast"}
- name: search
  type: system
  system: {resource: agent, subresource: doc, operation: search}
main:
- tool: forecast
  arguments: {city: $ _.city}
- sleep: {seconds: 1}
- tool: search
  arguments:
    text: $ "umbrella " + steps[0].input.city
- return:
    temp: $ steps[0].output.json.temp
    tip: $ _[0].snippet
`)
	start := time.Now()
	id := e.execute(t, task, map[string]any{"city": "Lisbon"})
	x := e.waitExecution(t, id, "succeeded", "failed")
	if x["status"] != "succeeded" {
		t.Fatalf("execution: %v", x)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("a one-second sleep ended after %s", took)
	}
	if out := fmt.Sprint(x["output"]); out != "map[temp:21 tip:Take an umbrella in Lisbon.]" {
		t.Errorf("output %s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 1 {
		t.Fatalf("idempotency keys %v", keys)
	}
	for k, n := range keys {
		if !strings.Contains(k, id) || n != 1 {
			t.Errorf("key %q sent %d times", k, n)
		}
	}
}

func TestExecutionStreams(t *testing.T) {
	e := newEnv(t)
	agent := e.agent(t, map[string]any{"name": "runner"})
	task := e.task(t, agent, "name: s\nmain:\n- evaluate: {a: $ 1}\n- wait_for_input: {info: {q: more}}\n- evaluate: {b: $ _.x}\n")
	id := e.execute(t, task, map[string]any{})
	e.waitExecution(t, id, "awaiting_input")
	type event struct{ name, data string }
	read := func(path string, got chan<- event) {
		req, _ := http.NewRequest("GET", e.node.URL+"/julep/executions/"+id+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			close(got)
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				got <- ev
				ev = event{}
			}
		}
		close(got)
	}
	statuses, transitions := make(chan event, 100), make(chan event, 100)
	go read("/status.stream", statuses)
	go read("/transitions.stream", transitions)
	// History first: the status now, the transitions so far.
	if ev := <-statuses; !strings.Contains(ev.data, `"status":"awaiting_input"`) {
		t.Fatalf("first status %+v", ev)
	}
	for i, want := range []string{"init", "step", "wait"} {
		if ev := <-transitions; !strings.Contains(ev.data, `"type":"`+want+`"`) {
			t.Fatalf("transition %d: %+v, want %s", i, ev, want)
		}
	}
	// Then live, until the end.
	e.must(t, http.StatusOK, "PUT", "/executions/"+id, map[string]any{"status": "running", "input": map[string]any{"x": 2}})
	var types []string
	for ev := range transitions {
		var m struct{ Transition struct{ Type string } }
		_ = json.Unmarshal([]byte(ev.data), &m)
		types = append(types, m.Transition.Type)
	}
	if strings.Join(types, " ") != "resume finish" {
		t.Errorf("live transitions %v", types)
	}
	var last string
	for ev := range statuses {
		last = ev.data
	}
	if !strings.Contains(last, `"status":"succeeded"`) {
		t.Errorf("last status %s", last)
	}
}
