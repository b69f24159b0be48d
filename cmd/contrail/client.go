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
	http *http.Client
}

// clientFlags adds --url, --api-key and --data-dir (to find admin.key) to a command.
func clientFlags(cmd *cobra.Command) func() (*client, error) {
	url := cmd.Flags().String("url", env("CONTRAIL_URL", "http://127.0.0.1:8080"), "the node to talk to (CONTRAIL_URL)")
	dataDir := cmd.Flags().String("data-dir", env("CONTRAIL_DATA_DIR", "./contrail-data"), "data dir whose admin.key is used when CONTRAIL_API_KEY is not set")
	return func() (*client, error) {
		key := os.Getenv("CONTRAIL_API_KEY")
		if key == "" {
			b, err := os.ReadFile(filepath.Join(*dataDir, "admin.key"))
			if err != nil {
				return nil, fmt.Errorf("no API key: set CONTRAIL_API_KEY, or point --data-dir at the node's data dir (%v)", err)
			}
			key = strings.TrimSpace(string(b))
		}
		return &client{base: strings.TrimRight(*url, "/"), key: key, http: http.DefaultClient}, nil
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
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
			return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.Error.Message)
		}
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(raw)))
	}
	return resp, nil
}

// printJSON writes v indented, for --json output.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
