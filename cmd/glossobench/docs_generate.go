package main

// docs/COMMANDS.md is every command's help text (TestCommandReference).
//go:generate go test -run TestCommandReference -update .
