package entitled

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// wireError is the "error" object of an error answer.
type wireError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Loaded  int64  `json:"loaded"`
	Total   int64  `json:"total"`
}

// decodeAnswer decodes a success answer into out (which may be nil), or returns the *Error of an error
// answer.
func decodeAnswer(line []byte, op string, out any) error {
	if !bytes.HasPrefix(line, []byte(`{"ok":true`)) {
		var env struct {
			OK *bool `json:"ok"`
		}
		if err := json.Unmarshal(line, &env); err != nil || env.OK == nil {
			return fmt.Errorf("%w: the answer to %s is not an answer: %.200s", ErrProtocol, op, line)
		}
		if !*env.OK {
			return errorOf(line, op)
		}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(line, out); err != nil {
		return fmt.Errorf("%w: the answer to %s does not decode: %v", ErrProtocol, op, err)
	}
	return nil
}

// errorOf returns the *Error of an error answer.
func errorOf(line []byte, op string) *Error {
	var env struct {
		Error *wireError `json:"error"`
	}
	e := &Error{Op: op, Answer: json.RawMessage(line)}
	if err := json.Unmarshal(line, &env); err != nil || env.Error == nil {
		e.Code = "unknown"
		e.Message = fmt.Sprintf("an unsuccessful answer without an error object: %.200s", line)
		return e
	}
	e.Code, e.Message, e.Loaded, e.Total = env.Error.Code, env.Error.Message, env.Error.Loaded, env.Error.Total
	return e
}

// answerCode returns the error code of an answer line, or "" for a success.
func answerCode(line []byte) Code {
	if bytes.HasPrefix(line, []byte(`{"ok":true`)) {
		return ""
	}
	var env struct {
		OK    bool       `json:"ok"`
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(line, &env) != nil || env.OK || env.Error == nil {
		return ""
	}
	return env.Error.Code
}

// decodeCheck reads a check's answer as the server writes it ({"ok":true,"id":N,"active":B} and, when
// active, "expiresAt"), without a JSON decoder: a check is the hot path. It returns false for any other
// shape, which decodeAnswer then reads.
func decodeCheck(line []byte, out *CheckResult) bool {
	i := bytes.Index(line, []byte(`,"active":`))
	if i < 0 || !bytes.HasPrefix(line, []byte(`{"ok":true,`)) {
		return false
	}
	rest := line[i+len(`,"active":`):]
	switch {
	case bytes.Equal(rest, []byte(`false}`)):
		*out = CheckResult{}
		return true
	case bytes.Equal(rest, []byte(`true,"expiresAt":null}`)):
		*out = CheckResult{Active: true}
		return true
	case bytes.HasPrefix(rest, []byte(`true,"expiresAt":"`)) && bytes.HasSuffix(rest, []byte(`"}`)):
		text := rest[len(`true,"expiresAt":"`) : len(rest)-2]
		t, err := time.Parse(time.RFC3339Nano, string(text))
		if err != nil {
			return false
		}
		*out = CheckResult{Active: true, ExpiresAt: &t}
		return true
	}
	return false
}
