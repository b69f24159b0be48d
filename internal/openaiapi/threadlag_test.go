package openaiapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAThreadsRoutesCheckTheThreadAsTheLogHasItWhileTheThreadsReadModelStandsStill: every route under a thread
// checks the thread first; while the threads read model applies nothing, a thread deleted meanwhile is not found
// there (its messages and runs are not served on as the model last showed it), and one made meanwhile is found.
func TestAThreadsRoutesCheckTheThreadAsTheLogHasItWhileTheThreadsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.ReadWait = 200 * time.Millisecond }))
	ctx := ctxFor(t)
	gone := e.thread(t, "Goodbye.")
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, gone.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 1 {
		t.Fatalf("the thread's messages: %v %s", apiErr(err), msgs.RawJSON())
	}
	msgID := msgs.Data[0].ID

	release := e.holdLease(t, "projection.threads_v2")
	defer release()
	if del, err := e.client.Beta.Threads.Delete(ctx, gone.ID); err != nil || !del.Deleted {
		t.Fatalf("delete the thread: %v", apiErr(err))
	}
	_, err = e.client.Beta.Threads.Messages.List(ctx, gone.ID, openai.BetaThreadMessageListParams{})
	wantAPIError(t, err, http.StatusNotFound, "")
	_, err = e.client.Beta.Threads.Messages.Get(ctx, gone.ID, msgID)
	wantAPIError(t, err, http.StatusNotFound, "")
	_, err = e.client.Beta.Threads.Runs.List(ctx, gone.ID, openai.BetaThreadRunListParams{})
	wantAPIError(t, err, http.StatusNotFound, "")

	made := e.thread(t, "Hello.")
	if msgs, err := e.client.Beta.Threads.Messages.List(ctx, made.ID, openai.BetaThreadMessageListParams{}); err != nil ||
		len(msgs.Data) != 1 {
		t.Fatalf("the messages of a thread made meanwhile: %v %s", apiErr(err), msgs.RawJSON())
	}
	if runs, err := e.client.Beta.Threads.Runs.List(ctx, made.ID, openai.BetaThreadRunListParams{}); err != nil ||
		len(runs.Data) != 0 {
		t.Fatalf("the runs of a thread made meanwhile: %v %s", apiErr(err), runs.RawJSON())
	}
}
