package julepapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// metadata_filter in each of its three spellings filters agents, users and docs; the dot notation is what
// @julep/sdk writes. A query parameter a list does not understand is a 400 naming it, not a list that ignores it.
func TestListMetadataFilter(t *testing.T) {
	e := newEnv(t)
	blue := e.agent(t, map[string]any{"name": "Blue", "metadata": map[string]any{"team": "blue", "rank": 1}})
	e.agent(t, map[string]any{"name": "Red", "metadata": map[string]any{"team": "red", "rank": "1"}})
	grace := e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "Grace", "metadata": map[string]any{"team": "blue"}})["id"].(string)
	e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "Alan", "metadata": map[string]any{"team": "red"}})
	e.must(t, http.StatusCreated, "POST", "/agents/"+blue+"/docs", map[string]any{"title": "Paris", "content": "Paris.", "metadata": map[string]any{"lang": "fr"}})
	e.must(t, http.StatusCreated, "POST", "/agents/"+blue+"/docs", map[string]any{"title": "Rome", "content": "Rome.", "metadata": map[string]any{"lang": "it"}})
	e.must(t, http.StatusCreated, "POST", "/users/"+grace+"/docs", map[string]any{"title": "Notes", "content": "Notes.", "metadata": map[string]any{"lang": "en"}})
	e.must(t, http.StatusCreated, "POST", "/users/"+grace+"/docs", map[string]any{"title": "Other", "content": "Other.", "metadata": map[string]any{"lang": "de"}})

	names := func(path string) []string {
		t.Helper()
		var out []string
		for _, it := range items(t, e.must(t, http.StatusOK, "GET", path, nil)) {
			if n, ok := it["name"].(string); ok {
				out = append(out, n)
			} else {
				out = append(out, it["title"].(string))
			}
		}
		return out
	}
	for _, c := range []struct {
		path string
		want string
	}{
		{"/agents?metadata_filter.team=blue", "Blue"},
		{"/agents?metadata_filter[team]=red", "Red"},
		{"/agents?metadata_filter=%7B%22team%22%3A%22blue%22%7D", "Blue"},
		{"/agents?metadata_filter.team=blue&metadata_filter.rank=1", "Blue"},
		// A query string has no types: rank=1 is the number 1 or the text "1".
		{"/agents?metadata_filter.rank=1", "Blue,Red"},
		{"/agents?metadata_filter.team=green", ""},
		{"/users?metadata_filter.team=blue", "Grace"},
		{"/agents/" + blue + "/docs?metadata_filter.lang=it", "Rome"},
		{"/users/" + grace + "/docs?metadata_filter.lang=en", "Notes"},
	} {
		if got := strings.Join(names(c.path), ","); got != c.want {
			t.Errorf("GET %s listed %q, want %q", c.path, got, c.want)
		}
	}

	for _, c := range []struct{ path, param string }{
		{"/agents?team=blue", "team"},
		{"/agents?filter.team=blue", "filter.team"},
		{"/users?metadata_filter%5Bteam=blue", "metadata_filter[team"},
		{"/agents/" + blue + "/docs?lang=it", "lang"},
		{"/agents/" + blue + "/tools?metadata_filter.team=blue", "metadata_filter.team"},
		{"/agents/" + blue + "/docs?include_embeddings=true", "include_embeddings"},
	} {
		r := e.do(t, "GET", c.path, nil)
		status, msg, body := errorOf(t, r)
		if status != http.StatusBadRequest || body["field"] != c.param || !strings.Contains(msg, c.param) {
			t.Errorf("GET %s: %d %s, want a 400 naming %s", c.path, status, r.body, c.param)
		}
	}
}
