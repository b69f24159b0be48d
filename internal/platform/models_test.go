package platform_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// ask sends a query to a new session of the front agent over GraphQL and waits for the answer. It returns the
// answer's text and type, and the GraphQL errors as "CODE: message".
func ask(t *testing.T, n *platformtest.Node, key, text string) (reply, typ string, errors []string) {
	t.Helper()
	var created struct {
		Data struct {
			CreateSession struct{ Session struct{ Handle string } }
		}
	}
	n.Do(t, key, "POST", "/graphql", map[string]any{"query": `mutation { createSession { session { handle } } }`}).JSON(t, &created)
	handle := created.Data.CreateSession.Session.Handle
	if handle == "" {
		t.Fatal("no session created")
	}
	var sent struct {
		Data struct {
			SendSessionMessage *struct {
				Response *struct{ Text, Type string }
			}
		}
		Errors []struct {
			Message    string
			Path       []any
			Extensions map[string]any
		}
	}
	r := n.Do(t, key, "POST", "/graphql", map[string]any{
		"query":     `mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}, wait: true) { response { text type } } }`,
		"variables": map[string]any{"s": handle, "t": text}})
	r.JSON(t, &sent)
	for _, e := range sent.Errors {
		errors = append(errors, fmt.Sprintf("%v: %s", e.Extensions["code"], e.Message))
	}
	if sent.Data.SendSessionMessage == nil || sent.Data.SendSessionMessage.Response == nil {
		t.Fatalf("no answer: %s", r.Body)
	}
	return sent.Data.SendSessionMessage.Response.Text, sent.Data.SendSessionMessage.Response.Type, errors
}

// TestModelOfflineMeansTheOfflineModel: CONTRAIL_MODEL=offline (--model offline) next to OPENAI_BASE_URL answers with
// the built-in model; "offline" is never sent upstream as a model name.
func TestModelOfflineMeansTheOfflineModel(t *testing.T) {
	t.Parallel()
	upstream := llmtest.NewServer(t)
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey, c.Model = upstream.URL, "sk-test", "offline"
	}))
	_, key := n.NewAccount(t, "ada")
	reply, typ, errs := ask(t, n, key, "What can you do?")
	if typ != "response" || len(errs) != 0 || !strings.Contains(reply, "offline model") {
		t.Fatalf("answer %q (%s), errors %v: want the offline model's notice", reply, typ, errs)
	}
	if got := upstream.Requests(); len(got) != 0 {
		t.Fatalf("the upstream server was asked %d times (first model %q)", len(got), got[0].Model)
	}
}

// TestModelServerDownIsAnErrorThatSaysWhichAndHowToFix: with OPENAI_BASE_URL pointing at a server that is not
// there, sendSessionMessage answers with a failure that names the model server and what to do, and an errors entry
// with a code; not the network's error as the agent's reply.
func TestModelServerDownIsAnErrorThatSaysWhichAndHowToFix(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/v1"
	l.Close()
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey, c.Model = down, "sk-test", "gpt-test"
	}))
	_, key := n.NewAccount(t, "ada")
	reply, typ, errs := ask(t, n, key, "hi")
	if typ != "error" || !strings.Contains(reply, down) || !strings.Contains(reply, "OPENAI_BASE_URL") ||
		!strings.Contains(reply, "connection refused") || strings.Contains(reply, "dial tcp") || strings.Contains(reply, "attempt") {
		t.Errorf("answer %q (%s): want a failure naming the model server, what went wrong and how to fix it", reply, typ)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "SERVICE_UNAVAILABLE: ") || !strings.Contains(errs[0], down) {
		t.Errorf("errors %v: want one SERVICE_UNAVAILABLE entry naming the model server", errs)
	}
}

// TestJSONLogsNameEachKeyOnce reads every JSON log line of a node whose model server fails once (the provider logs
// its retry) and finds no key twice in one object.
func TestJSONLogsNameEachKeyOnce(t *testing.T) {
	t.Parallel()
	upstream := llmtest.NewServer(t)
	upstream.Enqueue(llmtest.Error(503, "overloaded"), llmtest.Text("A: Hello from the model."))
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey, c.Model = upstream.URL, "sk-test", "gpt-test"
	}))
	_, key := n.NewAccount(t, "ada")
	if reply, _, errs := ask(t, n, key, "hi"); reply != "Hello from the model." || len(errs) != 0 {
		t.Fatalf("answer %q, errors %v", reply, errs)
	}
	logs := n.Logs.String()
	if !strings.Contains(logs, "model request failed; retrying") {
		t.Fatalf("the retry was not logged:\n%s", logs)
	}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if dup := repeatedKey(sc.Bytes()); dup != "" {
			t.Errorf("key %q repeated in log line %s", dup, sc.Bytes())
		}
	}
}

// repeatedKey returns a key that one object of the JSON document holds twice, or "".
func repeatedKey(line []byte) string {
	dec := json.NewDecoder(bytes.NewReader(line))
	var walk func() string
	walk = func() string {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				name, _ := k.(string)
				if seen[name] {
					return name
				}
				seen[name] = true
				if dup := walk(); dup != "" {
					return dup
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if dup := walk(); dup != "" {
					return dup
				}
			}
			_, _ = dec.Token()
		}
		return ""
	}
	return walk()
}
