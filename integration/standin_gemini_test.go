package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// geminiStandIn is a scripted stand-in for the Gemini API on 127.0.0.1, for
// the real gemini CLI (GOOGLE_GEMINI_BASE_URL): each POST to
// /v1beta/models/M:streamGenerateContent gets the next scripted reply as
// server-sent events; other calls (countTokens, generateContent for the
// CLI's own checks) a short answer. Every streamed request body is kept.
type geminiStandIn struct {
	srv *httptest.Server
	script[modelReply]
}

// modelReply is one model turn: an optional message, then tool calls.
type modelReply struct {
	text  string
	calls []modelCall
}

// modelCall is a function call: its id (where the API has one), name and
// arguments.
type modelCall struct {
	id, name string
	args     map[string]any
}

func newGeminiStandIn(t *testing.T) *geminiStandIn {
	s := &geminiStandIn{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *geminiStandIn) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		fmt.Fprint(w, `{"totalTokens":10}`)
		return
	}
	reply := modelReply{text: "Nothing more to do."}
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		var req map[string]any
		json.Unmarshal(body, &req)
		reply = s.next(req, reply)
	}
	parts := []map[string]any{}
	if reply.text != "" {
		parts = append(parts, map[string]any{"text": reply.text})
	}
	for _, c := range reply.calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.name, "args": c.args}})
	}
	resp, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
	})
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", resp)
		return
	}
	w.Write(resp)
}

// contents is what a streamed request sent as the conversation.
func geminiContents(req map[string]any) string {
	b, _ := json.Marshal(req["contents"])
	return string(b)
}
