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

// chatStandIn is a scripted stand-in for an OpenAI-compatible chat
// completions API on 127.0.0.1 (Qwen Code's OPENAI_BASE_URL): each
// streamed POST to /v1/chat/completions that offers tools gets the next
// scripted reply as server-sent chunks; a request without tools (a
// background helper of the CLI's own) gets a short answer and takes no
// reply from the script. The requests that took a reply are kept.
type chatStandIn struct {
	srv *httptest.Server
	script[modelReply]
}

func newChatStandIn(t *testing.T) *chatStandIn {
	s := &chatStandIn{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *chatStandIn) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(r.URL.Path, "/models") {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"standin-model","object":"model"}]}`)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	json.Unmarshal(body, &req)
	reply := modelReply{text: "Nothing more to do."}
	if tools, _ := req["tools"].([]any); len(tools) > 0 {
		reply = s.next(req, reply)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		m := map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 1, "model": "standin-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			m["choices"], m["usage"] = []any{}, usage
		}
		b, _ := json.Marshal(m)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": reply.text}, nil, nil)
	finish := "stop"
	for i, c := range reply.calls {
		args, _ := json.Marshal(c.args)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": string(args)}}}}, nil, nil)
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish, nil)
	chunk(nil, nil, map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// chatMessages is what a request sent as the conversation.
func chatMessages(req map[string]any) string {
	b, _ := json.Marshal(req["messages"])
	return string(b)
}
