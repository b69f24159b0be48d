package openaiapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAnItemReferenceToNoItemFailsTheResponse: an item_reference whose id names no item of the response's context
// fails the response, its error naming the id, and the model is not asked: left out, the model would answer
// without what the client meant it to read.
func TestAnItemReferenceToNoItemFailsTheResponse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, raw := e.send(t, http.MethodPost, "/v1/responses", `{"model":"gpt-4o-mini",
		"input":[{"type":"item_reference","id":"msg_doesnotexist"},{"role":"user","content":"Hi."}]}`)
	var got struct {
		Status string `json:"status"`
		Error  struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil || status != http.StatusOK {
		t.Fatalf("create: %d %s", status, raw)
	}
	if got.Status != "failed" || !strings.Contains(got.Error.Message, "msg_doesnotexist") {
		t.Errorf("want a failed response naming the reference: %s", raw)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}
