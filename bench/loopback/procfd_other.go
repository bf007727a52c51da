//go:build !linux

package main

import "errors"

func procFDPath(string) (string, error) { return "", errors.New("-proc-fd needs Linux's /proc") }
