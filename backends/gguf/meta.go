package gguf

import "fmt"

// metaUint reads an integer metadata value of any integer width.
func (f *File) metaUint(key string) (uint64, bool, error) {
	v, ok := f.Metadata[key]
	if !ok {
		return 0, false, nil
	}
	switch x := v.(type) {
	case uint8:
		return uint64(x), true, nil
	case uint16:
		return uint64(x), true, nil
	case uint32:
		return uint64(x), true, nil
	case uint64:
		return x, true, nil
	case int8:
		if x >= 0 {
			return uint64(x), true, nil
		}
	case int16:
		if x >= 0 {
			return uint64(x), true, nil
		}
	case int32:
		if x >= 0 {
			return uint64(x), true, nil
		}
	case int64:
		if x >= 0 {
			return uint64(x), true, nil
		}
	}
	return 0, true, fmt.Errorf("metadata %s: want a non-negative integer, got %T %v", key, v, v)
}

// metaInt is metaUint with a default and an upper bound that keeps the value
// usable as an int size.
func (f *File) metaInt(key string, def int, required bool) (int, error) {
	u, ok, err := f.metaUint(key)
	if err != nil {
		return 0, err
	}
	if !ok {
		if required {
			return 0, fmt.Errorf("metadata %s is missing", key)
		}
		return def, nil
	}
	if u > 1<<31 {
		return 0, fmt.Errorf("metadata %s = %d is out of range", key, u)
	}
	return int(u), nil
}

func (f *File) metaFloat(key string, def float64) (float64, error) {
	v, ok := f.Metadata[key]
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	}
	return 0, fmt.Errorf("metadata %s: want a float, got %T", key, v)
}

func (f *File) metaString(key string) (string, bool, error) {
	v, ok := f.Metadata[key]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, fmt.Errorf("metadata %s: want a string, got %T", key, v)
	}
	return s, true, nil
}

func (f *File) metaBool(key string, def bool) (bool, error) {
	v, ok := f.Metadata[key]
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, fmt.Errorf("metadata %s: want a bool, got %T", key, v)
	}
	return b, nil
}
