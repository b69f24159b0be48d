package openaiapi_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

// runIn runs one code_interpreter call in container c.
func (e *env) runIn(t *testing.T, c, code string) responses.ResponseOutputItemUnion {
	t.Helper()
	e.model.Enqueue(codeCall("call_"+c, code), llmtest.Text("ran"))
	r, err := e.client.Responses.New(ctxFor(t), responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("run"), Tools: codeIn(c),
		Include: []responses.ResponseIncludable{"code_interpreter_call.outputs"}})
	if err != nil || len(r.Output) == 0 || r.Output[0].Status != "completed" {
		t.Fatalf("run in %s: %v: %s", c, apiErr(err), raw(r))
	}
	return r.Output[0]
}

// TestDeletedContainerClosesItsSandboxAtOnce: deleting a container closes its warm sandbox on the node that holds
// it when the deletion is published, not at the next sweep (an hour away here) nor at the pool's idle close; the
// node says why in its log, once. Another container's sandbox stays warm.
func TestDeletedContainerClosesItsSandboxAtOnce(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.ContainerSweep = time.Hour }))
	ctx := ctxFor(t)
	var made []string
	for _, name := range []string{"doomed", "kept"} {
		c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: name})
		if err != nil {
			t.Fatalf("create %s: %v", name, apiErr(err))
		}
		e.runIn(t, c.ID, "x = 'still here'")
		made = append(made, c.ID)
	}
	doomed, kept := made[0], made[1]
	if !e.node.WarmSandbox(doomed) || !e.node.WarmSandbox(kept) {
		t.Fatalf("warm after a call each: %+v", e.node.WarmCodeSandboxes())
	}
	if err := e.client.Containers.Delete(ctx, doomed); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	// The node forgets the sandbox, then closes it, then logs it.
	waittest.Until(t, "the deleted container's sandbox to close", func() bool {
		return !e.node.WarmSandbox(doomed) && e.node.SandboxClosed(doomed, "its container was deleted") > 0
	})
	if n := e.node.SandboxClosed(doomed, "its container was deleted"); n != 1 {
		t.Fatalf("the close of the deleted container's sandbox is logged %d times:\n%s", n, e.node.Logs)
	}
	if out := e.runIn(t, kept, "print(x)"); len(out.Outputs) == 0 || strings.TrimSpace(out.Outputs[0].Logs) != "still here" {
		t.Fatalf("the other container's sandbox lost its state: %s", out.RawJSON())
	}
}

// TestExpiredContainerSandboxIsSwept: the node's periodic check closes the warm sandbox of a container that
// expired, with nobody using it, and says why once; a container still running keeps its sandbox and its state.
func TestExpiredContainerSandboxIsSwept(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	clk := platformtest.NewClock(time.Now())
	e := newEnv(t, platformtest.WithClock(clk.Now),
		platformtest.WithConfig(func(c *config.Config) { c.ContainerSweep = 20 * time.Millisecond }))
	ctx := ctxFor(t)
	short, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "short",
		ExpiresAfter: openai.ContainerNewParamsExpiresAfter{Anchor: "last_active_at", Minutes: 1}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	long, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "long"})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	e.runIn(t, short.ID, "x = 1")
	e.runIn(t, long.ID, "x = 'still here'")
	if !e.node.WarmSandbox(short.ID) || !e.node.WarmSandbox(long.ID) {
		t.Fatalf("warm after a call each: %+v", e.node.WarmCodeSandboxes())
	}

	clk.Add(2 * time.Minute)
	waittest.Until(t, "the expired container's sandbox to close", func() bool {
		return !e.node.WarmSandbox(short.ID) && e.node.SandboxClosed(short.ID, "its container expired") > 0
	})
	if n := e.node.SandboxClosed(short.ID, "its container expired"); n != 1 {
		t.Fatalf("the close of the expired container's sandbox is logged %d times:\n%s", n, e.node.Logs)
	}
	if got, err := e.client.Containers.Get(ctx, short.ID); err != nil || got.Status != "expired" {
		t.Fatalf("the swept container: %v: %s", apiErr(err), raw(got))
	}
	if out := e.runIn(t, long.ID, "print(x)"); len(out.Outputs) == 0 || strings.TrimSpace(out.Outputs[0].Logs) != "still here" {
		t.Fatalf("the running container's sandbox lost its state: %s", out.RawJSON())
	}
}

// TestDeletingOnAnotherNodeClosesTheSandbox: two nodes share one NATS; a container's code ran on one of them, and
// its deletion through the other closes the sandbox on the node holding it at once (the sweep is an hour away).
func TestDeletingOnAnotherNodeClosesTheSandbox(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	model := llmtest.NewServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test"
		c.ContainerSweep = time.Hour
	})
	n1 := platformtest.Start(t, base, platformtest.WithConfig(func(c *config.Config) { c.NATSListen, c.NATSListenSet = addr, true }))
	n2 := platformtest.Start(t, base, platformtest.WithConfig(func(c *config.Config) { c.NATSURL = "nats://" + addr }))
	_, key := n1.NewAccount(t, "two")
	e1 := &env{node: n1, model: model, client: sdk(n1, key), key: key}
	ctx := ctxFor(t)
	c, err := e1.client.Containers.New(ctx, openai.ContainerNewParams{Name: "shared"})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	e1.runIn(t, c.ID, "x = 1")
	// Either node's responder may have run the call: the deletion goes through the other one.
	holder, other := n1, n2
	if !n1.WarmSandbox(c.ID) {
		holder, other = n2, n1
	}
	if !holder.WarmSandbox(c.ID) {
		t.Fatalf("no node holds a warm sandbox: %+v, %+v", n1.WarmCodeSandboxes(), n2.WarmCodeSandboxes())
	}
	otherClient := sdk(other, key)
	if err := otherClient.Containers.Delete(ctx, c.ID); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	waittest.Until(t, "the holder to close the deleted container's sandbox", func() bool {
		return !holder.WarmSandbox(c.ID) && holder.SandboxClosed(c.ID, "its container was deleted") > 0
	})
}

// twoFileContainer makes a container holding sales.csv and notes.txt; it returns its ID and the files'.
func (e *env) twoFileContainer(t *testing.T) (id, csv, notes string) {
	t.Helper()
	csv = e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\n"))
	notes = e.upload(t, "notes.txt", []byte("remember the milk"))
	c, err := e.client.Containers.New(ctxFor(t), openai.ContainerNewParams{Name: "box", FileIDs: []string{csv, notes}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	return c.ID, csv, notes
}

// TestRemovedFileLeavesTheWarmSandbox: a file removed from a container is gone from /mnt/data at the next call,
// in the same warm sandbox (its variables stay); one added again is back.
func TestRemovedFileLeavesTheWarmSandbox(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	e := newEnv(t)
	ctx := ctxFor(t)
	c, csv, _ := e.twoFileContainer(t)
	list := "import os\nprint(x, sorted(f for f in os.listdir('/mnt/data') if f.endswith(('.csv', '.txt'))))"
	if out := e.runIn(t, c, "x = 'kept'\n"+list); strings.TrimSpace(out.Outputs[0].Logs) != "kept ['notes.txt', 'sales.csv']" {
		t.Fatalf("before: %s", out.RawJSON())
	}
	if err := e.client.Containers.Files.Delete(ctx, c, csv); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	if out := e.runIn(t, c, list); strings.TrimSpace(out.Outputs[0].Logs) != "kept ['notes.txt']" {
		t.Fatalf("after the removal: %s", out.RawJSON())
	}
	if _, err := e.client.Containers.Files.New(ctx, c, openai.ContainerFileNewParams{FileID: openai.String(csv)}); err != nil {
		t.Fatalf("add again: %v", apiErr(err))
	}
	if out := e.runIn(t, c, list); strings.TrimSpace(out.Outputs[0].Logs) != "kept ['notes.txt', 'sales.csv']" {
		t.Fatalf("added again: %s", out.RawJSON())
	}
}

// TestAStaleFileIsRemovedOnlyFromAWarmSandbox: the cell that removes a container's removed files from /mnt/data
// runs before a call only when the container has a warm sandbox to hold them; a call that starts a fresh one runs
// its code as the sandbox's first cell. The driver names each cell by its number ("<cell 1>"), which the code reads.
func TestAStaleFileIsRemovedOnlyFromAWarmSandbox(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	e := newEnv(t)
	ctx := ctxFor(t)
	c, csv, notes := e.twoFileContainer(t)
	if err := e.client.Containers.Files.Delete(ctx, c, csv); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	cell := "import os, sys\nprint(sys._getframe().f_code.co_filename, sorted(f for f in os.listdir('/mnt/data') if f.endswith(('.csv', '.txt'))))"
	if out := e.runIn(t, c, cell); strings.TrimSpace(out.Outputs[0].Logs) != "<cell 1> ['notes.txt']" {
		t.Fatalf("the first call, no sandbox warm: %s", out.RawJSON())
	}
	// Warm now: a file removed from the container is removed from the sandbox by a cell of its own.
	if err := e.client.Containers.Files.Delete(ctx, c, notes); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	if out := e.runIn(t, c, cell); strings.TrimSpace(out.Outputs[0].Logs) != "<cell 3> []" {
		t.Fatalf("the second call, in the warm sandbox: %s", out.RawJSON())
	}
}
