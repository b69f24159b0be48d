package openaiapi_test

import (
	"encoding/json"
	"io"
	"testing"
)

// send makes a request of the face as the env's account, raw (what an SDK would not send), and returns the
// status and the body.
func (e *env) send(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	resp := e.complianceDo(t, method, path, body)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

// errorParam is the param an OpenAI error object in body names ("" when there is none).
func errorParam(body string) string {
	var got struct {
		Error struct {
			Param string `json:"param"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &got)
	return got.Error.Param
}
