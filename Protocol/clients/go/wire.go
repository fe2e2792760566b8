package entitled

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// wire builds one request line by hand: typed requests are encoded without reflection (a check is the
// hot path), and a field left at its zero value is left out, which the protocol reads as absent.
type wire struct {
	b []byte
}

var wirePool = sync.Pool{New: func() any { return &wire{b: make([]byte, 0, 256)} }}

// getWire returns an empty wire of the pool: a request's fields are encoded there, outside the
// connection's lock, then copied into its output.
func getWire() *wire { return wirePool.Get().(*wire) }

func putWire(w *wire) {
	if cap(w.b) <= 64<<10 {
		w.b = w.b[:0]
		wirePool.Put(w)
	}
}

// start begins a request: {"op":OP,"id":ID (the id only when id > 0).
func (w *wire) start(op string, id uint64) {
	w.b = append(w.b, `{"op":"`...)
	w.b = append(w.b, op...)
	w.b = append(w.b, '"')
	if id > 0 {
		w.b = append(w.b, `,"id":`...)
		w.b = strconv.AppendUint(w.b, id, 10)
	}
}

// end closes the object and the line.
func (w *wire) end() { w.b = append(w.b, '}', '\n') }

func (w *wire) key(name string) {
	w.b = append(w.b, ',', '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *wire) str(name, v string) {
	if v == "" {
		return
	}
	w.key(name)
	w.b = appendJSONString(w.b, v)
}

func (w *wire) time(name string, t time.Time) {
	if t.IsZero() {
		return
	}
	w.key(name)
	w.b = append(w.b, '"')
	w.b = t.UTC().AppendFormat(w.b, "2006-01-02T15:04:05.000Z")
	w.b = append(w.b, '"')
}

func (w *wire) int(name string, v int64) {
	if v == 0 {
		return
	}
	w.key(name)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *wire) flag(name string, v bool) {
	if !v {
		return
	}
	w.key(name)
	w.b = append(w.b, "true"...)
}

func (w *wire) optFlag(name string, v *bool) {
	if v == nil {
		return
	}
	w.key(name)
	w.b = strconv.AppendBool(w.b, *v)
}

func (w *wire) strs(name string, v []string) {
	if v == nil {
		return
	}
	w.key(name)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, s)
	}
	w.b = append(w.b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaping what RFC 8259 requires; invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	// Most identifiers need no escape: copy them at once.
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, s...)
		return append(b, '"')
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
