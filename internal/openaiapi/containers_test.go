package openaiapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
	"github.com/contrailhq/contrail/projections"
)

func codeIn(container string) []responses.ToolUnionParam {
	return []responses.ToolUnionParam{{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
		Container: responses.ToolCodeInterpreterContainerUnionParam{OfString: openai.String(container)}}}}
}

// TestContainerExpiresAfterIsChecked: expires_after is echoed (20 minutes when not asked), and a bad one is a 400
// naming its field; one account lists none of another's containers (newest first).
func TestContainerExpiresAfterIsChecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "short",
		ExpiresAfter: openai.ContainerNewParamsExpiresAfter{Anchor: "last_active_at", Minutes: 7}})
	if err != nil || c.ExpiresAfter.Minutes != 7 || c.ExpiresAfter.Anchor != "last_active_at" || c.Status != "running" ||
		c.LastActiveAt != c.CreatedAt {
		t.Fatalf("create: %v: %s", apiErr(err), raw(c))
	}
	got, err := e.client.Containers.Get(ctx, c.ID)
	if err != nil || got.ExpiresAfter.Minutes != 7 {
		t.Fatalf("get: %v: %s", apiErr(err), raw(got))
	}
	d, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "default"})
	if err != nil || d.ExpiresAfter.Minutes != 20 {
		t.Fatalf("create with the default: %v: %s", apiErr(err), raw(d))
	}
	for _, bad := range []struct {
		ea    openai.ContainerNewParamsExpiresAfter
		param string
	}{
		{openai.ContainerNewParamsExpiresAfter{Anchor: "created_at", Minutes: 5}, "expires_after.anchor"},
		{openai.ContainerNewParamsExpiresAfter{Anchor: "last_active_at", Minutes: 0}, "expires_after.minutes"},
		{openai.ContainerNewParamsExpiresAfter{Anchor: "last_active_at", Minutes: -3}, "expires_after.minutes"},
		{openai.ContainerNewParamsExpiresAfter{Anchor: "last_active_at", Minutes: 1441}, "expires_after.minutes"},
	} {
		_, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "bad", ExpiresAfter: bad.ea})
		wantAPIError(t, err, 400, bad.param)
	}

	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	if _, err := other.Containers.New(ctx, openai.ContainerNewParams{Name: "theirs"}); err != nil {
		t.Fatalf("other's create: %v", apiErr(err))
	}
	for who, client := range map[string]openai.Client{"tester": e.client, "other": other} {
		list, err := client.Containers.List(ctx, openai.ContainerListParams{})
		if err != nil {
			t.Fatalf("%s lists: %v", who, apiErr(err))
		}
		var names []string
		for _, c := range list.Data {
			names = append(names, c.Name)
		}
		want := map[string]string{"tester": "default,short", "other": "theirs"}[who]
		if strings.Join(names, ",") != want {
			t.Fatalf("%s lists %v, want %s", who, names, want)
		}
	}
}

// TestContainersExpireWhenIdle: a container's code_interpreter calls move its last_active_at; idle for its
// expires_after minutes (the platform's clock moved), it shows "expired" and a response cannot use it. A response's
// {"type": "auto"} container that expires between two calls is followed by a fresh one.
func TestContainersExpireWhenIdle(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	clk := platformtest.NewClock(time.Now())
	e := newEnv(t, platformtest.WithClock(clk.Now))
	ctx := ctxFor(t)
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "box",
		ExpiresAfter: openai.ContainerNewParamsExpiresAfter{Anchor: "last_active_at", Minutes: 5}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}

	clk.Add(3 * time.Minute)
	e.model.Enqueue(codeCall("call_1", "print(6*7)"), llmtest.Text("42"))
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("6*7?"), Tools: codeIn(c.ID)})
	if err != nil || r.Output[0].Type != "code_interpreter_call" || r.Output[0].Status != "completed" {
		t.Fatalf("use: %v: %s", apiErr(err), raw(r))
	}
	got, err := e.client.Containers.Get(ctx, c.ID)
	if err != nil || got.LastActiveAt != clk.Now().Unix() || got.LastActiveAt == got.CreatedAt || got.Status != "running" {
		t.Fatalf("after a call at %d: %v: %s", clk.Now().Unix(), apiErr(err), raw(got))
	}

	// Seven minutes after it was made but four after its use, it still runs; five after its use, it expired.
	clk.Add(4 * time.Minute)
	if got, err := e.client.Containers.Get(ctx, c.ID); err != nil || got.Status != "running" {
		t.Fatalf("4 minutes idle: %v: %s", apiErr(err), raw(got))
	}
	clk.Add(time.Minute)
	if got, err := e.client.Containers.Get(ctx, c.ID); err != nil || got.Status != "expired" {
		t.Fatalf("5 minutes idle: %v: %s", apiErr(err), raw(got))
	}
	list, err := e.client.Containers.List(ctx, openai.ContainerListParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].Status != "expired" {
		t.Fatalf("list: %v: %s", apiErr(err), raw(list))
	}
	_, err = e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("again"), Tools: codeIn(c.ID)})
	if ae := wantAPIError(t, err, 400, "tools[0].container"); ae.Message != "Container is expired." {
		t.Fatalf("expired: %s", ae.RawJSON())
	}

	// An auto container idle past its 20 minutes between two calls of one response: the second runs in a new one.
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		switch last := req.LastMessage(); {
		case last.Role != llm.RoleTool:
			return codeCall("call_a", "x = 1\nprint(x)")
		case last.ToolCallID == "call_a":
			clk.Add(21 * time.Minute)
			return codeCall("call_b", "print(2)")
		}
		return llmtest.Text("done")
	})
	auto := []responses.ToolUnionParam{{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
		Container: responses.ToolCodeInterpreterContainerUnionParam{OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{}}}}}
	r, err = e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("twice"), Tools: auto})
	if err != nil || len(r.Output) != 3 {
		t.Fatalf("auto: %v: %s", apiErr(err), raw(r))
	}
	first, second := r.Output[0], r.Output[1]
	if first.Status != "completed" || second.Status != "completed" || first.ContainerID == second.ContainerID {
		t.Fatalf("the calls ran in %s (%s), then %s (%s)", first.ContainerID, first.Status, second.ContainerID, second.Status)
	}
	old, err := e.client.Containers.Get(ctx, first.ContainerID)
	if err != nil || old.Status != "expired" {
		t.Fatalf("the first auto container: %v: %s", apiErr(err), raw(old))
	}
	fresh, err := e.client.Containers.Get(ctx, second.ContainerID)
	if err != nil || fresh.Status != "running" || fresh.LastActiveAt != clk.Now().Unix() {
		t.Fatalf("the fresh auto container: %v: %s", apiErr(err), raw(fresh))
	}
}

// TestContainerFilesAreItsActivity: adding a file (by file_id, or uploaded) moves a container's last_active_at;
// once it expired, adding is refused and an upload is not kept. One account cannot add to another's container, nor
// add another's file to its own.
func TestContainerFilesAreItsActivity(t *testing.T) {
	t.Parallel()
	clk := platformtest.NewClock(time.Now())
	e := newEnv(t, platformtest.WithClock(clk.Now))
	ctx := ctxFor(t)
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\n"))
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "box",
		ExpiresAfter: openai.ContainerNewParamsExpiresAfter{Anchor: "last_active_at", Minutes: 5}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}

	clk.Add(2 * time.Minute)
	f, err := e.client.Containers.Files.New(ctx, c.ID, openai.ContainerFileNewParams{FileID: openai.String(csv)})
	if err != nil || f.ID != csv || f.Source != "user" || f.Path != "/mnt/data/sales.csv" || f.ContainerID != c.ID {
		t.Fatalf("add by file_id: %v: %s", apiErr(err), raw(f))
	}
	got, err := e.client.Containers.Get(ctx, c.ID)
	if err != nil || got.LastActiveAt != clk.Now().Unix() || got.LastActiveAt == got.CreatedAt {
		t.Fatalf("after adding at %d: %v: %s", clk.Now().Unix(), apiErr(err), raw(got))
	}
	clk.Add(4 * time.Minute) // six minutes after it was made, four after the file
	up, err := e.client.Containers.Files.New(ctx, c.ID, openai.ContainerFileNewParams{
		File: openai.File(strings.NewReader("remember the milk"), "notes.txt", "text/plain")})
	if err != nil || !strings.HasPrefix(up.ID, "file-") || up.Path != "/mnt/data/notes.txt" {
		t.Fatalf("upload: %v: %s", apiErr(err), raw(up))
	}
	files, err := e.client.Containers.Files.List(ctx, c.ID, openai.ContainerFileListParams{})
	if err != nil || len(files.Data) != 2 {
		t.Fatalf("files: %v: %s", apiErr(err), raw(files))
	}

	clk.Add(5 * time.Minute)
	if got, err := e.client.Containers.Get(ctx, c.ID); err != nil || got.Status != "expired" {
		t.Fatalf("5 minutes idle: %v: %s", apiErr(err), raw(got))
	}
	before, err := e.client.Files.List(ctx, openai.FileListParams{})
	if err != nil {
		t.Fatalf("list files: %v", apiErr(err))
	}
	_, err = e.client.Containers.Files.New(ctx, c.ID, openai.ContainerFileNewParams{FileID: openai.String(csv)})
	if ae := wantAPIError(t, err, 400, "container_id"); ae.Message != "Container is expired." {
		t.Fatalf("expired: %s", ae.RawJSON())
	}
	_, err = e.client.Containers.Files.New(ctx, c.ID, openai.ContainerFileNewParams{
		File: openai.File(strings.NewReader("too late"), "late.txt", "text/plain")})
	wantAPIError(t, err, 400, "container_id")
	// The same as JSON, whose file_id is read before the container is.
	if r := e.node.Do(t, e.key, "POST", "/v1/containers/"+c.ID+"/files", map[string]string{"file_id": csv}); r.Status != 400 ||
		!strings.Contains(string(r.Body), "Container is expired.") {
		t.Fatalf("JSON add to an expired container: %d %s", r.Status, r.Body)
	}
	after, err := e.client.Files.List(ctx, openai.FileListParams{})
	if err != nil || len(after.Data) != len(before.Data) {
		t.Fatalf("an upload to an expired container was kept: %d files, then %d", len(before.Data), len(after.Data))
	}

	fresh, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "fresh"})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	_, err = e.client.Containers.Files.New(ctx, fresh.ID, openai.ContainerFileNewParams{FileID: openai.String("nope")})
	wantAPIError(t, err, 400, "file_id")
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	theirs := (&env{node: e.node, client: other}).upload(t, "theirs.csv", []byte("a\n1\n"))
	_, err = e.client.Containers.Files.New(ctx, fresh.ID, openai.ContainerFileNewParams{FileID: openai.String(theirs)})
	wantAPIError(t, err, 404, "file_id")
	_, err = other.Containers.Files.New(ctx, fresh.ID, openai.ContainerFileNewParams{FileID: openai.String(theirs)})
	wantAPIError(t, err, 404, "")
}

// TestContainersListPages: an account's containers list from its index (projections.Containers), newest first
// unless asked, a page at a time with limit and after; a deleted one leaves it, another account's never shows.
func TestContainersListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	me, key := e.node.NewAccount(t, "lister")
	client := sdk(e.node, key)
	var made []string
	for _, name := range []string{"a", "b", "c", "d"} {
		c, err := client.Containers.New(ctx, openai.ContainerNewParams{Name: name})
		if err != nil {
			t.Fatalf("create %s: %v", name, apiErr(err))
		}
		made = append(made, c.ID)
	}
	if _, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "theirs"}); err != nil { // another account's
		t.Fatalf("another account's create: %v", apiErr(err))
	}
	if err := client.Containers.Delete(ctx, made[2]); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	names := func(p openai.ContainerListParams) (string, bool) {
		t.Helper()
		list, err := client.Containers.List(ctx, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, apiErr(err))
		}
		var out []string
		for _, c := range list.Data {
			out = append(out, c.Name)
		}
		return strings.Join(out, ","), list.HasMore
	}
	if got, more := names(openai.ContainerListParams{}); got != "d,b,a" || more {
		t.Fatalf("list: %s (more %v)", got, more)
	}
	if got, more := names(openai.ContainerListParams{Limit: openai.Int(2), Order: openai.ContainerListParamsOrderAsc}); got != "a,b" || !more {
		t.Fatalf("first page ascending: %s (more %v)", got, more)
	}
	if got, more := names(openai.ContainerListParams{Limit: openai.Int(2), Order: openai.ContainerListParamsOrderAsc, After: openai.String(made[1])}); got != "d" || more {
		t.Fatalf("after b ascending: %s (more %v)", got, more)
	}
	if got, _ := names(openai.ContainerListParams{Limit: openai.Int(1), After: openai.String(made[3])}); got != "b" {
		t.Fatalf("after d, newest first: %s", got)
	}
	// OpenAI's name filter is applied; a filter it does not know is refused, not ignored.
	if got, _ := names(openai.ContainerListParams{Name: openai.String("b")}); got != "b" {
		t.Fatalf("named b: %s", got)
	}
	if got, _ := names(openai.ContainerListParams{Name: openai.String("theirs")}); got != "" {
		t.Fatalf("another account's name: %s", got)
	}
	_, err := client.Containers.List(ctx, openai.ContainerListParams{}, option.WithQuery("status", "running"))
	wantAPIError(t, err, 400, "status")
	// The index holds the account's containers under its own keys, and not the one deleted.
	for i, id := range made {
		_, ok, err := projections.Get[projections.Listed[projections.ContainerView]](ctx, e.node.Views, "containers",
			projections.OwnedKey(me.AccountID, id))
		if err != nil || ok != (i != 2) {
			t.Fatalf("the index holds %s: %v, %v", id, ok, err)
		}
	}
}

// TestContainerFileDelete: a file removed from a container leaves its listing and its content (the account's file
// stays); removing it again, from another account, or from a container that is not there is a 404; added again,
// it is there again.
func TestContainerFileDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\n"))
	notes := e.upload(t, "notes.txt", []byte("remember the milk"))
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "box", FileIDs: []string{notes}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if _, err := e.client.Containers.Files.New(ctx, c.ID, openai.ContainerFileNewParams{FileID: openai.String(csv)}); err != nil {
		t.Fatalf("add: %v", apiErr(err))
	}
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	wantAPIError(t, other.Containers.Files.Delete(ctx, c.ID, csv), 404, "")

	if err := e.client.Containers.Files.Delete(ctx, c.ID, csv); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	if r := e.node.Do(t, e.key, "DELETE", "/v1/containers/"+c.ID+"/files/"+notes, nil); r.Status != 200 ||
		!strings.Contains(string(r.Body), `"object":"container.file.deleted"`) || !strings.Contains(string(r.Body), `"id":"`+notes+`"`) {
		t.Fatalf("delete as JSON: %d %s", r.Status, r.Body)
	}
	files, err := e.client.Containers.Files.List(ctx, c.ID, openai.ContainerFileListParams{})
	if err != nil || len(files.Data) != 0 {
		t.Fatalf("files after both were removed: %v: %s", apiErr(err), raw(files))
	}
	_, err = e.client.Containers.Files.Get(ctx, c.ID, csv)
	wantAPIError(t, err, 404, "")
	_, err = e.client.Containers.Files.Content.Get(ctx, c.ID, csv)
	wantAPIError(t, err, 404, "")
	wantAPIError(t, e.client.Containers.Files.Delete(ctx, c.ID, csv), 404, "")
	wantAPIError(t, e.client.Containers.Files.Delete(ctx, "cntr_nothere", csv), 404, "")
	if _, err := e.client.Files.Get(ctx, csv); err != nil {
		t.Fatalf("the account's file went with the container's: %v", apiErr(err))
	}

	// Added again, it is the container's again: a new event, not the first add replayed.
	if f, err := e.client.Containers.Files.New(ctx, c.ID, openai.ContainerFileNewParams{FileID: openai.String(csv)}); err != nil || f.ID != csv {
		t.Fatalf("add again: %v: %s", apiErr(err), raw(f))
	}
	files, err = e.client.Containers.Files.List(ctx, c.ID, openai.ContainerFileListParams{})
	if err != nil || len(files.Data) != 1 || files.Data[0].ID != csv {
		t.Fatalf("files after adding one again: %v: %s", apiErr(err), raw(files))
	}
}

// TestContainerFilesListPages: a container's files list newest first unless asked, a page at a time with limit and
// after; a query parameter the list does not apply is refused, naming it.
func TestContainerFilesListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	var made []string
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		made = append(made, e.upload(t, name, []byte(name)))
	}
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "box", FileIDs: made})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	paths := func(p openai.ContainerFileListParams) (string, bool) {
		t.Helper()
		list, err := e.client.Containers.Files.List(ctx, c.ID, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, apiErr(err))
		}
		var out []string
		for _, f := range list.Data {
			out = append(out, strings.TrimPrefix(f.Path, "/mnt/data/"))
		}
		return strings.Join(out, ","), list.HasMore
	}
	if got, more := paths(openai.ContainerFileListParams{}); got != "c.txt,b.txt,a.txt" || more {
		t.Fatalf("list: %s (more %v)", got, more)
	}
	if got, more := paths(openai.ContainerFileListParams{Limit: openai.Int(2), Order: openai.ContainerFileListParamsOrderAsc}); got != "a.txt,b.txt" || !more {
		t.Fatalf("first page ascending: %s (more %v)", got, more)
	}
	if got, more := paths(openai.ContainerFileListParams{Limit: openai.Int(2), After: openai.String(made[2])}); got != "b.txt,a.txt" || more {
		t.Fatalf("after c, newest first: %s (more %v)", got, more)
	}
	_, err = e.client.Containers.Files.List(ctx, c.ID, openai.ContainerFileListParams{}, option.WithQuery("source", "user"))
	wantAPIError(t, err, 400, "source")
	_, err = e.client.Containers.Files.List(ctx, c.ID, openai.ContainerFileListParams{Limit: openai.Int(101)})
	wantAPIError(t, err, 400, "limit")
}

// TestContainersListWhoseIndexStandsStillIsA503: while the containers index stands still, a container made or
// deleted past the read wait is answered as done (it is read from its log), and a listing is a 503 saying the read
// model is behind, not one without the container just made; once the index goes on, the listing has it.
func TestContainersListWhoseIndexStandsStillIsA503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	release := e.node.HoldLease(t, "projection.containers")
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "mine"})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if got, err := e.client.Containers.Get(ctx, c.ID); err != nil || got.Name != "mine" {
		t.Fatalf("get the container made past the wait: %v", apiErr(err))
	}
	gone, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "gone"})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if err := e.client.Containers.Delete(ctx, gone.ID); err != nil {
		t.Fatalf("delete past the wait: %v", apiErr(err))
	}
	_, err = e.client.Containers.List(ctx, openai.ContainerListParams{})
	wantBehind(t, "list containers", err)

	release()
	waittest.Until(t, "the container in the list", func() bool {
		list, err := e.client.Containers.List(ctx, openai.ContainerListParams{})
		return err == nil && len(list.Data) == 1 && list.Data[0].ID == c.ID
	})
}

// TestContainerSandboxAsks: a container may ask for what its sandbox gives (1 GiB, no network), and is shown so; one
// that asks for more memory, network access or skills is a 400 naming the field, and nothing is made, whether
// created by hand or asked for by a response's {"type": "auto"} container.
func TestContainerSandboxAsks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	c, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "small", MemoryLimit: openai.ContainerNewParamsMemoryLimit1g},
		option.WithJSONSet("network_policy", map[string]any{"type": "disabled"}))
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if c.MemoryLimit != "1g" || c.NetworkPolicy.Type != "disabled" {
		t.Errorf("the container shows memory_limit %q and network_policy %q, want 1g and disabled: %s", c.MemoryLimit, c.NetworkPolicy.Type, c.RawJSON())
	}
	refused := []struct {
		name  string
		opt   option.RequestOption
		param string
	}{
		{"more memory", option.WithJSONSet("memory_limit", "4g"), "memory_limit"},
		{"an unknown memory limit", option.WithJSONSet("memory_limit", "2g"), "memory_limit"},
		{"network access", option.WithJSONSet("network_policy", map[string]any{"type": "allowlist", "allowed_domains": []string{"example.com"}}), "network_policy.type"},
		{"skills", option.WithJSONSet("skills", []any{map[string]any{"type": "skill_reference", "skill_id": "skill_1"}}), "skills"},
	}
	for _, r := range refused {
		_, err := e.client.Containers.New(ctx, openai.ContainerNewParams{Name: "big"}, r.opt)
		wantAPIError(t, err, 400, r.param)
	}
	list, err := e.client.Containers.List(ctx, openai.ContainerListParams{})
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != c.ID {
		t.Fatalf("the containers are %v (%v), want only the one made", raw(list), apiErr(err))
	}

	tool := responses.ToolUnionParam{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
		Container: responses.ToolCodeInterpreterContainerUnionParam{OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{
			MemoryLimit: "16g"}}}}
	_, err = e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"),
		Tools: []responses.ToolUnionParam{tool}})
	if !canSandbox() {
		return // the tool itself is refused first where code cannot run
	}
	wantAPIError(t, err, 400, "tools[0].container.memory_limit")
	wantUnasked(t, e)
}
