package julepapi_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// Two nodes on a three-server NATS cluster share the executions of a map-reduce whose 200 branches call the model:
// the branches' model calls spread over both nodes (each node keeps up to 64 effects under way, so fewer than that
// at once may all go to one); then one node is killed in the middle, and the other finishes every execution.
func TestTasksOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	c := natstest.StartCluster(t)
	model := llmtest.NewServer(t)
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text("seen " + req.LastMessage().Content).WithDelay(time.Duration(20+rand.IntN(30)) * time.Millisecond)
	})
	opts := platformtest.WithConfig(func(cfg *config.Config) {
		cfg.NATSURL = c.URLs()
		cfg.OpenAIBaseURL, cfg.OpenAIAPIKey = model.URL, "sk-test"
		cfg.HandlerAckWait = 2 * time.Second
	})
	a := platformtest.Start(t, opts)
	principal, key := a.NewAccount(t, "ada")
	a.SetLimits(t, principal.AccountID, 1<<30, 1<<30)
	b := platformtest.Start(t, opts)
	ea, eb := &env{node: a, model: model, key: key}, &env{node: b, model: model, key: key}
	agent := ea.agent(t, map[string]any{"name": "mapper", "model": "gpt-4o-mini"})
	task := ea.task(t, agent, `
name: spread
main:
- over: $ list(range(200))
  map:
    prompt: "item {{ _ }}"
    unwrap: true
  parallelism: 50
- sleep: {seconds: 1}
- evaluate: {n: $ len(_)}
`)
	// The first executions run on both nodes.
	first := eb.execute(t, task, map[string]any{})
	if x := eb.waitExecution(t, first, "succeeded", "failed"); fmt.Sprint(x["output"]) != "map[n:200]" {
		t.Fatalf("first execution: %v", x)
	}
	if ha, hb := a.Handled("task-effects"), b.Handled("task-effects"); ha == 0 || hb == 0 {
		t.Errorf("the model calls of one map-reduce ran on one node only: %v on A, %v on B", ha, hb)
	} else {
		t.Logf("effects handled: %v on node A, %v on node B", ha, hb)
	}
	// Then node A dies while five executions are under way; node B finishes them.
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, ea.execute(t, task, map[string]any{}))
	}
	time.Sleep(time.Duration(100+rand.IntN(400)) * time.Millisecond)
	a.Crash()
	for _, id := range ids {
		if x := eb.waitExecution(t, id, "succeeded", "failed"); fmt.Sprint(x["output"]) != "map[n:200]" {
			t.Errorf("execution %s after node A died: %v", id, x)
		}
	}
	list := items(t, eb.must(t, http.StatusOK, "GET", "/tasks/"+task+"/executions", nil))
	if len(list) != 6 {
		t.Errorf("%d executions listed, want 6", len(list))
	}
}
