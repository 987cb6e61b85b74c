// Command distill-lint checks distill's house rules (lint.FuncLen,
// lint.MutableExport); make lint runs it as go vet's -vettool.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"distill.dev/proto/tools/lint"
)

func main() { multichecker.Main(lint.FuncLen, lint.MutableExport) }
