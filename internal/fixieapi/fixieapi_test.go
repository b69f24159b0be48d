package fixieapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/fixieapi"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

func upload(t *testing.T, n *platformtest.Node, key, contentType string, body []byte) (fixieapi.EmbedJSON, int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", n.URL+"/api/embeds", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e fixieapi.EmbedJSON
	if resp.StatusCode == http.StatusCreated {
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
	}
	return e, resp.StatusCode, raw
}

func get(t *testing.T, uri string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

// TestEmbeds: upload raw and multipart, dedupe by content, serve by signed URL without a key, refuse a tampered or
// expired URL, bound the size, and carry embeds in messages (uploaded or as data: URIs).
func TestEmbeds(t *testing.T) {
	t.Parallel()
	clk := platformtest.NewClock(time.Now())
	n := platformtest.Start(t, platformtest.WithClock(clk.Now))
	_, key := n.NewAccount(t, "ada")
	_, otherKey := n.NewAccount(t, "eve")
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 1000)...)

	e, status, raw := upload(t, n, key, "image/png", png)
	if status != http.StatusCreated || !strings.HasPrefix(e.ID, "emb_") || e.ContentType != "image/png" || e.Size != int64(len(png)) ||
		!strings.HasPrefix(e.ContentHash, "sha256:") {
		t.Fatalf("upload: %d %s", status, raw)
	}
	again, _, _ := upload(t, n, key, "image/png", png)
	if again.ID != e.ID {
		t.Fatalf("the same upload made embed %s, then %s", e.ID, again.ID)
	}

	// The signed URL serves the bytes with their type, no key needed.
	resp, body := get(t, e.URI)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, png) {
		t.Fatalf("GET signed URL: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	u, _ := url.Parse(e.URI)
	q := u.Query()
	sig := []byte(q.Get("sig"))
	sig[0] ^= 1 // any change must void it
	q.Set("sig", string(sig))
	u.RawQuery = q.Encode()
	if resp, _ := get(t, u.String()); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("tampered URL answered %d", resp.StatusCode)
	}
	if resp, _ := get(t, n.URL+fixieapi.EmbedContentPath(e.ID)); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unsigned URL answered %d", resp.StatusCode)
	}

	// Multipart, with the file part's own content type.
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="file"; filename="note.txt"`}
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	pw, _ := mw.CreatePart(h)
	_, _ = pw.Write([]byte("hello embed"))
	_ = mw.Close()
	txt, status, raw := upload(t, n, key, mw.FormDataContentType(), mp.Bytes())
	if status != http.StatusCreated || txt.ContentType != "text/plain; charset=utf-8" || txt.Filename != "note.txt" {
		t.Fatalf("multipart upload: %d %s", status, raw)
	}
	if resp, body := get(t, txt.URI); string(body) != "hello embed" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("multipart embed serves %q as %s", body, resp.Header.Get("Content-Type"))
	}

	// Too large: 413.
	if _, status, raw := upload(t, n, key, "application/octet-stream", make([]byte, 10<<20+1)); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized upload: %d %s", status, raw)
	}

	// A message carries the uploaded embed and a data: URI; the session lists both, with signed URLs.
	gql := func(k, query string, vars map[string]any) map[string]any {
		resp := n.Do(t, k, "POST", "/graphql", map[string]any{"query": query, "variables": vars})
		var out map[string]any
		resp.JSON(t, &out)
		return out
	}
	created := gql(key, `mutation { createSession { session { handle } } }`, nil)
	handle := created["data"].(map[string]any)["createSession"].(map[string]any)["session"].(map[string]any)["handle"].(string)
	out := gql(key, `mutation($s: String!, $e: [EmbedInput!]) { sendSessionMessage(messageData: {session: $s, text: "Mask out the background in #1, see #note", embeds: $e}) {
  message { embeds { key contentType uri embed { id contentHash } } } } }`, map[string]any{"s": handle, "e": []any{
		map[string]any{"key": "1", "embedId": e.ID},
		map[string]any{"key": "note", "uri": "data:text/plain;base64,aGVsbG8="},
	}})
	if out["errors"] != nil {
		t.Fatalf("send with embeds: %v", out["errors"])
	}
	embeds := out["data"].(map[string]any)["sendSessionMessage"].(map[string]any)["message"].(map[string]any)["embeds"].([]any)
	if len(embeds) != 2 {
		t.Fatalf("message embeds %v", embeds)
	}
	note := embeds[1].(map[string]any)
	if resp, body := get(t, note["uri"].(string)); string(body) != "hello" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("data: URI embed serves %q as %q", body, resp.Header.Get("Content-Type"))
	}
	// Another account cannot reference the embed.
	otherSession := gql(otherKey, `mutation { createSession { session { handle } } }`, nil)["data"].(map[string]any)["createSession"].(map[string]any)["session"].(map[string]any)["handle"].(string)
	out = gql(otherKey, `mutation($s: String!, $id: String) { sendSessionMessage(messageData: {session: $s, text: "#1", embeds: [{key: "1", embedId: $id}]}) { message { id } } }`,
		map[string]any{"s": otherSession, "id": e.ID})
	if out["errors"] == nil || !strings.Contains(out["errors"].([]any)[0].(map[string]any)["message"].(string), e.ID) {
		t.Fatalf("eve referenced ada's embed: %v", out)
	}

	// An hour later the URL has expired.
	clk.Add(fixieapi.DefaultURLTTL + time.Minute)
	if resp, body := get(t, e.URI); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "expired") {
		t.Fatalf("expired URL answered %d %s", resp.StatusCode, body)
	}
}

// TestSessionEventsEndpoint: the replay endpoint reads the session's events from the log, as JSON lines, from a
// sequence, and follows live; other accounts get 404.
func TestSessionEventsEndpoint(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	_, otherKey := n.NewAccount(t, "eve")
	gql := func(query string, vars map[string]any) map[string]any {
		resp := n.Do(t, key, "POST", "/graphql", map[string]any{"query": query, "variables": vars})
		var out map[string]any
		resp.JSON(t, &out)
		if out["errors"] != nil {
			t.Fatalf("%s: %v", query, out["errors"])
		}
		return out["data"].(map[string]any)
	}
	handle := gql(`mutation { createSession { session { handle } } }`, nil)["createSession"].(map[string]any)["session"].(map[string]any)["handle"].(string)
	gql(`mutation($s: String!) { sendSessionMessage(messageData: {session: $s, text: "hi"}, wait: true) { response { id } } }`, map[string]any{"s": handle})

	lines := func(resp []byte) []fixieapi.EventJSON {
		var out []fixieapi.EventJSON
		sc := bufio.NewScanner(bytes.NewReader(resp))
		for sc.Scan() {
			var e fixieapi.EventJSON
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			out = append(out, e)
		}
		return out
	}
	resp := n.Do(t, key, "GET", "/api/sessions/"+handle+"/events", nil)
	all := lines(resp.Body)
	// The query was posted to an idle session: its dispatch is in the post, not an event of its own.
	if resp.Status != 200 || len(all) != 3 || all[0].Type != "session.created" || all[2].Type != "session.reply_posted" {
		t.Fatalf("events: %d %v", resp.Status, types(all))
	}
	from := all[1].Sequence
	tail := lines(n.Do(t, key, "GET", "/api/sessions/"+handle+"/events?from="+itoa(from), nil).Body)
	if len(tail) != 2 || tail[0].ID != all[1].ID {
		t.Fatalf("events from %d: %+v", from, tail)
	}
	if r := n.Do(t, otherKey, "GET", "/api/sessions/"+handle+"/events", nil); r.Status != 404 {
		t.Fatalf("another account read the events: %d", r.Status)
	}
	if r := n.Do(t, key, "GET", "/api/sessions/"+handle+"/events?from=x", nil); r.Status != 400 {
		t.Fatalf("from=x answered %d", r.Status)
	}

	// Follow: history, then the next message's events as they are appended.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", n.URL+"/api/sessions/"+handle+"/events?follow=true", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	fresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer fresp.Body.Close()
	sc := bufio.NewScanner(fresp.Body)
	var followed []fixieapi.EventJSON
	for len(followed) < 5 && sc.Scan() {
		var e fixieapi.EventJSON
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		followed = append(followed, e)
		if len(followed) == 3 {
			gql(`mutation($s: String!) { sendSessionMessage(messageData: {session: $s, text: "again"}) { message { id } } }`, map[string]any{"s": handle})
		}
	}
	if len(followed) != 5 || followed[3].Type != "session.message_posted" || followed[4].Type != "session.reply_posted" {
		t.Fatalf("followed %d events: %v", len(followed), types(followed))
	}
	for i := 1; i < len(followed); i++ {
		if followed[i].Sequence <= followed[i-1].Sequence {
			t.Fatalf("followed events out of order: %v", types(followed))
		}
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func types(es []fixieapi.EventJSON) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%d:%s", e.Sequence, e.Type)
	}
	return out
}
