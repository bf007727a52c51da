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

// anthropicStandIn is a scripted stand-in for the Anthropic Messages API
// on 127.0.0.1: the real claude CLI talks to it through
// ANTHROPIC_BASE_URL. Requests of the agent loop (those that offer tools)
// get the next scripted reply, streamed as server-sent events exactly as
// the API streams them; side requests (titles, topic checks) get a short
// text. Every agent-loop request is kept, so a test can see what the CLI
// sent (the turns of a resumed fork, say).
type anthropicStandIn struct {
	t                    *testing.T
	srv                  *httptest.Server
	script[standInReply] // agent-loop replies, and the requests kept

	mu sync.Mutex
	n  int
}

// standInReply is one assistant message: text, then tool calls. wait, if
// set, is called before it is sent (to hold a subagent back until the main
// thread is done, say), and sent after it is.
type standInReply struct {
	text  string
	calls []standInCall
	wait  func()
	sent  func()
}

type standInCall struct {
	id, name string
	input    map[string]any
}

func newAnthropicStandIn(t *testing.T) *anthropicStandIn {
	s := &anthropicStandIn{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// agentRequests returns the agent-loop requests seen so far.
func (s *anthropicStandIn) agentRequests() []map[string]any { return s.seen() }

func (s *anthropicStandIn) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		if strings.Contains(r.URL.Path, "count_tokens") {
			fmt.Fprint(w, `{"input_tokens": 100}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	tools, _ := req["tools"].([]any)
	reply := standInReply{text: "ok"}
	s.mu.Lock()
	s.n++
	id := fmt.Sprintf("msg_standin_%03d", s.n)
	s.mu.Unlock()
	if len(tools) > 0 {
		reply = s.next(req, standInReply{text: "Nothing more to do."})
	}
	if reply.wait != nil {
		reply.wait()
	}
	if reply.sent != nil {
		defer reply.sent()
	}
	model, _ := req["model"].(string)
	if stream, _ := req["stream"].(bool); !stream {
		s.reply(w, id, model, reply)
		return
	}
	s.stream(w, id, model, reply)
}

// reply answers a non-streaming request.
func (s *anthropicStandIn) reply(w http.ResponseWriter, id, model string, r standInReply) {
	content := []map[string]any{{"type": "text", "text": r.text}}
	stop := "end_turn"
	for _, c := range r.calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 10}})
}

// stream answers a streaming request with the Messages API's events.
func (s *anthropicStandIn) stream(w http.ResponseWriter, id, model string, r standInReply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	i := 0
	if r.text != "" {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": r.text}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	stop := "end_turn"
	for _, c := range r.calls {
		in, _ := json.Marshal(c.input)
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
		stop = "tool_use"
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
