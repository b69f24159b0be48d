package turn

import (
	"context"
	"errors"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
)

// ErrStopped is what Ask returns when the call was stopped because its aggregate may have ended (a run cancelled or
// expired, a background response cancelled): the caller reads the aggregate again and sees.
var ErrStopped = errors.New("the model call was stopped")

// Ask makes a turn's model call, streaming its pieces to onDelta. The call stops when stop closes (nil: never) and
// Ask returns ErrStopped; when ctx ends (the node stopping, a lock lost) it returns ctx's error, and the turn is
// someone else's to finish; otherwise the model's answer or its error (see FailureCode).
func Ask(ctx context.Context, models llm.Provider, req llm.Request, stop <-chan struct{}, onDelta func(llm.Delta)) (llm.Response, error) {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancel()
			case <-callCtx.Done():
			}
		}()
	}
	resp, err := models.Complete(callCtx, req, onDelta)
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	if callCtx.Err() != nil {
		return resp, ErrStopped
	}
	return resp, err
}

// Usage is what a call used, as both APIs record it.
func Usage(u llm.Usage) events.TokenUsage {
	return events.TokenUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// CapCompletion bounds a call's completion by what is left of a limit on the completion tokens of all the calls of
// a run or a response (max_completion_tokens, max_output_tokens: OpenAI counts every call): spent says nothing is
// left, so there is no call to make; capped says the call is bounded, so that an answer it cut (CutShort) ends the
// run or the response incomplete.
func CapCompletion(req *llm.Request, limit *int, used int) (capped, spent bool) {
	if limit == nil {
		return false, false
	}
	left := *limit - used
	if left <= 0 {
		return false, true
	}
	req.MaxTokens = left
	return true, false
}

// CutShort reports whether an answer was cut by its call's cap (CapCompletion).
func CutShort(resp llm.Response, capped bool) bool {
	return capped && resp.FinishReason == llm.FinishLength
}
