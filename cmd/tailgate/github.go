package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/github"
)

const githubCommentUsage = "usage: tailgate github comment --body FILE [--marker TEXT] [--pr N] [--repo OWNER/NAME]\n\n" +
	"Posts FILE as the pull request's tailgate comment, or updates it in place: one comment per\n" +
	"pull request, found again by a hidden marker. Reads GITHUB_TOKEN, GITHUB_API_URL,\n" +
	"GITHUB_REPOSITORY and GITHUB_EVENT_PATH as a GitHub Actions job sets them.\n"

// cmdGitHub holds what the GitHub Action needs beyond the gate itself.
func cmdGitHub(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		cmdline.PrintHelp(stdout, githubCommentUsage)
		if len(args) == 0 {
			return usagef("name a subcommand: comment")
		}
		return nil
	}
	switch args[0] {
	case "comment":
		return cmdGitHubComment(ctx, args[1:], stdout, stderr)
	}
	return unknownSub("github", args[0])
}

func cmdGitHubComment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("github comment")
	bodyPath := fs.String("body", "", "Markdown `FILE` to post (- for standard input)")
	marker := fs.String("marker", github.DefaultMarker, "hidden `TEXT` that marks the comment to update")
	pr := fs.Int("pr", 0, "pull request `N` (default: pull_request.number of $GITHUB_EVENT_PATH)")
	repo := fs.String("repo", os.Getenv("GITHUB_REPOSITORY"), "repository `OWNER/NAME`")
	cmdline.SetUsage(fs, stdout, githubCommentUsage+"\n")
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
