package chattemplate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// strftime formats t as C's strftime does in the C locale, the function
// llama.cpp's strftime_now and date variables call. Unknown directives are
// copied as written.
func strftime(t time.Time, format string) string {
	s, _ := strftimeChecked(t, format)
	return s
}

// strftimeChecked is strftime that reports an unknown directive.
func strftimeChecked(t time.Time, format string) (string, error) {
	var b strings.Builder
	var err error
	pad := func(n, width int, noPad bool) {
		s := strconv.Itoa(n)
		if !noPad {
			for len(s) < width {
				s = "0" + s
			}
		}
		b.WriteString(s)
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		noPad := false
		if format[i] == '-' && i+1 < len(format) { // glibc: no padding
			noPad = true
			i++
		}
		switch format[i] {
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'd':
			pad(t.Day(), 2, noPad)
		case 'e':
			if noPad {
				pad(t.Day(), 1, true)
			} else {
				fmt.Fprintf(&b, "%2d", t.Day())
			}
		case 'H':
			pad(t.Hour(), 2, noPad)
		case 'I':
			pad((t.Hour()+11)%12+1, 2, noPad)
		case 'j':
			pad(t.YearDay(), 3, noPad)
		case 'm':
			pad(int(t.Month()), 2, noPad)
		case 'M':
			pad(t.Minute(), 2, noPad)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'S':
			pad(t.Second(), 2, noPad)
		case 'y':
			pad(t.Year()%100, 2, noPad)
		case 'Y':
			pad(t.Year(), 1, true)
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'u':
			pad((int(t.Weekday())+6)%7+1, 1, true)
		case 'w':
			pad(int(t.Weekday()), 1, true)
		case '%':
			b.WriteByte('%')
		default:
			if err == nil {
				err = fmt.Errorf("strftime_now: directive %%%c is not supported", format[i])
			}
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(format[i])
		}
	}
	return b.String(), err
}
