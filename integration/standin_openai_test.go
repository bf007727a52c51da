package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// responsesStandIn is a scripted stand-in for the OpenAI Responses API on
// 127.0.0.1, for the real codex CLI (a [model_providers.X] with
// wire_api = "responses"). Each POST to /v1/responses gets the next
// scripted reply as server-sent events; every request body is kept.
type responsesStandIn struct {
	t                      *testing.T
	srv                    *httptest.Server
	script[responsesReply] // replies, and the requests kept

	mu sync.Mutex
	n  int
}

// responsesReply is one model turn: an optional message, then function
// calls (name and JSON arguments).
type responsesReply struct {
	text  string
	calls []responsesCall
}

type responsesCall struct {
	callID, name, args string
}

func newResponsesStandIn(t *testing.T) *responsesStandIn {
	s := &responsesStandIn{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *responsesStandIn) allRequests() []map[string]any { return s.seen() }

func (s *responsesStandIn) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"standin-model","object":"model"}],"models":[]}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	json.Unmarshal(body, &req)
	s.mu.Lock()
	s.n++
	id := fmt.Sprintf("resp_standin_%03d", s.n)
	s.mu.Unlock()
	reply := s.next(req, responsesReply{text: "Nothing more to do."})
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	if reply.text != "" {
		send(map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "message", "role": "assistant", "id": id + "_msg",
			"content": []map[string]any{{"type": "output_text", "text": reply.text}}}})
	}
	for _, c := range reply.calls {
		send(map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "function_call", "call_id": c.callID, "name": c.name, "arguments": c.args}})
	}
	send(map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 10, "input_tokens_details": nil, "output_tokens": 10, "output_tokens_details": nil, "total_tokens": 20}}})
}
