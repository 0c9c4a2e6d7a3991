package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
)

// Variant is a target with sysctls in force during its trials, exactly
// that long: they are restored when each run returns, however it returns
// (an error, an interrupt, a panic). A host variant is a Variant of Host.
type Variant struct {
	Target
	// VariantName names the variant; "" is the target's own name.
	VariantName string
	Sysctls     []sysctl.Setting
	// Root is /proc/sys.
	Root string
}

func (v *Variant) Name() string {
	if v.VariantName != "" {
		return v.VariantName
	}
	return v.Target.Name()
}

func (v *Variant) Prepare(req runner.Request) (runner.Request, error) { return v.Target.Prepare(req) }

func (v *Variant) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (res *result.Result, err error) {
	if len(v.Sysctls) > 0 {
		applied, aerr := sysctl.Apply(v.Root, v.Sysctls)
		if aerr != nil {
			var re *sysctl.RestoreError
			if errors.As(aerr, &re) {
				return nil, &RestoreError{aerr}
			}
			return nil, Infra(fmt.Errorf("variant %s: %w", v.Name(), aerr))
		}
		defer func() {
			if rerr := applied.Restore(); rerr != nil {
				err = &RestoreError{errors.Join(rerr, err)}
			}
		}()
	}
	return v.Target.Run(ctx, req, p)
}

var variantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseVariant reads a host variant, NAME[:KEY=VALUE[,KEY=VALUE...]], and
// describes it ("host, vm.swappiness=10").
func ParseVariant(s string) (name string, settings []sysctl.Setting, description string, err error) {
	name, list, _ := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !variantName.MatchString(name) {
		return "", nil, "", Inputf("--variant %q: name %q must be letters, digits, '.', '_' or '-' (it names the Result file); want NAME[:KEY=VALUE,...]", s, name)
	}
	if strings.TrimSpace(list) == "" {
		return name, nil, "host", nil
	}
	var descr []string
	for _, kv := range strings.Split(list, ",") {
		st, err := sysctl.Parse(kv)
		if err != nil {
			return "", nil, "", Inputf("--variant %s: %v", name, err)
		}
		if slices.ContainsFunc(settings, func(o sysctl.Setting) bool { return o.Key == st.Key }) {
			return "", nil, "", Inputf("--variant %s: %s set twice", name, st.Key)
		}
		settings = append(settings, st)
		descr = append(descr, st.String())
	}
	return name, settings, "host, " + strings.Join(descr, ", "), nil
}

// CheckVariants puts back, before anything runs, the sysctls under root
// that a run which died (SIGKILL) left changed, from its journal, saying
// so on log; then refuses a key this kernel lacks (a typo until proven
// otherwise), is read-only or will not take the variant's value: found
// here, in one line naming the key and the value, not after the base's
// trials. Targets that are not variants are passed over.
func CheckVariants(targets []Target, root string, log io.Writer) error {
	restored, err := sysctl.Recover(root)
	for _, s := range restored {
		fmt.Fprintf(log, "tailgate: restored sysctl %s, left changed by a tailgate run that died\n", s)
	}
	if err != nil {
		return &RestoreError{err}
	}
	var vs []*Variant
	for _, t := range targets {
		if v, ok := t.(*Variant); ok {
			vs = append(vs, v)
		}
	}
	for _, v := range vs {
		for _, s := range v.Sysctls {
			if _, err := sysctl.Read(root, s.Key); err != nil {
				return Inputf("variant %s: %v", v.Name(), err)
			}
		}
	}
	for _, v := range vs {
		if err := sysctl.Probe(root, v.Sysctls); err != nil {
			var pe *sysctl.ProbeError
			if errors.As(err, &pe) {
				return Inputf("variant %s: %v; drop it or give it a value this kernel takes", v.Name(), err)
			}
			return &RestoreError{err}
		}
	}
	return nil
}
