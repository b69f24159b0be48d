package julepapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitExecution polls an execution until its status is one of want (or the test's patience ends) and returns it.
func (e *env) waitExecution(t testing.TB, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
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
