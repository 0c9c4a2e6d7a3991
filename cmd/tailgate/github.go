package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/github"
)

func githubSubs() []cmdline.Sub {
	return []cmdline.Sub{{Name: "comment", Synopsis: "--body FILE [--marker TEXT] [--pr N] [--repo OWNER/NAME]", Run: cmdGitHubComment,
		About: subAbout("Posts FILE as the pull request's tailgate comment, or updates it in place: one comment per pull request, found again by a hidden marker. Reads GITHUB_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY and GITHUB_EVENT_PATH as a GitHub Actions job sets them.",
			githubExits, "tailgate github comment --body report.md",
			"tailgate github comment --body report.md --pr 42 --repo OWNER/NAME")},
		{Name: "baseline", Synopsis: "--branch BRANCH --artifact NAME -o DIR [--repo OWNER/NAME]", Run: cmdGitHubBaseline,
			About: subAbout("Finds BRANCH's stored baseline, the artifact NAME of the newest successful push run of this workflow on BRANCH in this repository, made by that run itself (never a fork's run from a branch of the same name), and unpacks it into DIR. None yet: says so, exit 0, DIR not made. Reads GITHUB_TOKEN (actions: read), GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_WORKFLOW_REF and GITHUB_EVENT_PATH.",
				exits{"0 unpacked, or none yet", exitBadInput + " (no token, DIR not empty)", "3 GitHub's API refused, or the artifact was not made by its run"},
				"tailgate github baseline --branch main --artifact tailgate-baseline -o b")}}
}

func cmdGitHubBaseline(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	branch := fs.String("branch", "", "the `BRANCH` whose pushes keep the baseline")
	artifact := fs.String("artifact", "", "the artifact's `NAME`")
	out := fs.String("o", "", "unpack it into `DIR` (new or empty)")
	repo := fs.String("repo", os.Getenv("GITHUB_REPOSITORY"), "repository `OWNER/NAME`")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *branch == "" || *artifact == "" || *out == "" {
		return usagef("want --branch BRANCH --artifact NAME -o DIR")
	}
	return engine.GitHubBaseline{Repo: *repo, Branch: *branch, Artifact: *artifact, Dir: *out}.Fetch(ctx, os.Getenv, stdout, stderr)
}

// githubExits are the exit codes of github comment.
var githubExits = exits{"0 posted", exitBadInput + " (no token, no pull request, a body that does not read)",
	"3 GitHub's API refused or failed"}

// cmdGitHub holds what the GitHub Action needs beyond the gate itself.
func cmdGitHub(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	about := "\ncomment posts the report as the pull request's tailgate comment, or updates it in place;\nbaseline unpacks a branch's stored baseline, the artifact its last push run kept.\n\n" +
		helpEnd(githubExits, "tailgate github comment --body report.md")
	return cmdline.Subcommands{Command: "github", Subs: githubSubs(), About: about}.Dispatch(ctx, args, stdout, stderr)
}

func cmdGitHubComment(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	bodyPath := fs.String("body", "", "Markdown `FILE` to post (- for standard input)")
	marker := fs.String("marker", github.DefaultMarker, "hidden `TEXT` that marks the comment to update")
	pr := fs.Int("pr", 0, "pull request `N` (default: pull_request.number of $GITHUB_EVENT_PATH)")
	repo := fs.String("repo", os.Getenv("GITHUB_REPOSITORY"), "repository `OWNER/NAME`")
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q; the body comes from --body FILE", pos[0])
	}
	if *bodyPath == "" {
		return usagef("--body FILE is required")
	}
	body, err := github.ReadBody(*bodyPath, os.Stdin)
	if err != nil {
		return usagef("body: %v", err)
	}
	c, n, err := github.FromEnv(os.Getenv, *repo, *pr)
	if err != nil {
		return &usageError{Err: err}
	}
	cm, created, err := c.Upsert(ctx, n, *marker, string(body))
	if err != nil {
		return infra(fmt.Errorf("comment on #%d: %w", n, err))
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	fmt.Fprintf(stdout, "%s comment %d on %s#%d %s\n", verb, cm.ID, *repo, n, cm.URL)
	return nil
}
