package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// client talks to a running node for the CLI's commands.
type client struct {
	base string
	key  string
	// keyFrom says where the key came from, for the message when the node refuses it.
	keyFrom string
	http    *http.Client
}

// clientFlags adds --url, --api-key and --data-dir (to find admin.key) to a command.
func clientFlags(cmd *cobra.Command) func() (*client, error) {
	url := cmd.Flags().String("url", env("CONTRAIL_URL", "http://127.0.0.1:8080"), "the node to talk to (CONTRAIL_URL)")
	dataDir := cmd.Flags().String("data-dir", env("CONTRAIL_DATA_DIR", "./contrail-data"), "data dir whose admin.key is used when CONTRAIL_API_KEY is not set")
	return func() (*client, error) {
		key, from := os.Getenv("CONTRAIL_API_KEY"), "CONTRAIL_API_KEY"
		if key == "" {
			file := filepath.Join(*dataDir, "admin.key")
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, fmt.Errorf("no API key: set CONTRAIL_API_KEY, or point --data-dir at the node's data dir (%v)", err)
			}
			key, from = strings.TrimSpace(string(b)), file+" (CONTRAIL_API_KEY is not set)"
		}
		return &client{base: strings.TrimRight(*url, "/"), key: key, keyFrom: from, http: http.DefaultClient}, nil
	}
}

// do sends a request and decodes a JSON answer into out (when not nil). A non-2xx answer is an error carrying the
// server's message.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns the response of a 2xx answer for the caller to read.
func (c *client) send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w (is `contrail serve` running there?)", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return nil, c.refused(method, path, resp.StatusCode, errorMessage(raw))
	}
	return resp, nil
}

// refused is the error of a non-2xx answer. A refused key says so in words and where the key came from, rather
// than the face's JSON, since a new user's first mistake is a wrong or missing CONTRAIL_API_KEY.
func (c *client) refused(method, path string, status int, msg string) error {
	switch status {
	case http.StatusUnauthorized:
		return fmt.Errorf("the node at %s refused the API key from %s (%d: %s). Check CONTRAIL_API_KEY: it must be "+
			"a key `contrail accounts create` or `contrail keys create` printed, or the node's admin.key", c.base, c.keyFrom, status, msg)
	case http.StatusForbidden:
		return fmt.Errorf("%s %s: the API key from %s may not do this (%d: %s)", method, path, c.keyFrom, status, msg)
	}
	return fmt.Errorf("%s %s: %d %s: %s", method, path, status, http.StatusText(status), msg)
}

// errorMessage is the message of an error answer in any face's shape: {"error": {"message"}} (the admin API, /v1),
// {"errors": [{"message"}]} (GraphQL), else the body itself.
func errorMessage(raw []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(raw, &e) == nil {
		if e.Error.Message != "" {
			return e.Error.Message
		}
		msgs := make([]string, 0, len(e.Errors))
		for _, x := range e.Errors {
			if x.Message != "" {
				msgs = append(msgs, x.Message)
			}
		}
		if len(msgs) > 0 {
			return strings.Join(msgs, "; ")
		}
	}
	return strings.TrimSpace(string(raw))
}

// printJSON writes v indented, for --json output.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
