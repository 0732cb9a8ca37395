#!/usr/bin/env bash
# The DevBox container's entrypoint: keeps a GitHub token for git fresh through the internal
# API, clones the run's repository (from github.com or a GitHub Enterprise Server, over https or
# http), then becomes the DevBox agent (`clustercode devbox`).
# The token is an installation token for this one repository with contents: write only.
set -euo pipefail

: "${CLUSTERCODE_API_URL:?is not set}"
: "${CLUSTERCODE_DEVBOX_ID:?is not set}"
: "${CLUSTERCODE_DEVBOX_TOKEN:?is not set}"
: "${CLUSTERCODE_REPOSITORY:?is not set}"

workspace="${CLUSTERCODE_WORKSPACE:-$HOME/workspace}"
credentials="$HOME/.git-credentials"
token_url="${CLUSTERCODE_API_URL%/}/internal/devboxes/${CLUSTERCODE_DEVBOX_ID}/token"

# Writes a fresh token into git's credential store; fails when the API gives none.
refresh_token() {
  local body token
  body="$(curl -fsS --max-time 10 \
    -H "Authorization: Bearer ${CLUSTERCODE_DEVBOX_TOKEN}" "$token_url")" || return 1
  token="$(node -e \
    'process.stdout.write(String(JSON.parse(require("fs").readFileSync(0, "utf8")).token ?? ""))' \
    <<<"$body")" || return 1
  [[ -n "$token" ]] || return 1
  (
    umask 077
    printf '%s://x-access-token:%s@%s\n' "$git_protocol" "$token" "$git_host" >"$credentials.new"
  )
  mv "$credentials.new" "$credentials"
}

# An http(s) repository URL (github.com, or a GitHub Enterprise Server over https or plain http)
# gets the token for its own host and protocol; a local path is cloned as it is.
if [[ "$CLUSTERCODE_REPOSITORY" =~ ^(https?)://([^/@]+)/ ]]; then
  git_protocol="${BASH_REMATCH[1]}"
  git_host="${BASH_REMATCH[2]}"
  git config --global credential.helper "store --file=$credentials"
  if ! refresh_token; then
    echo "clustercode devbox: no GitHub token from the internal API; cloning without one" >&2
  fi
  # Installation tokens live an hour: refresh well before that while the agent runs.
  (
    while sleep "${CLUSTERCODE_TOKEN_REFRESH_SECONDS:-1500}"; do
      refresh_token || echo "clustercode devbox: token refresh failed; retrying later" >&2
    done
  ) &
fi

rm -rf "$workspace"
git clone --quiet -- "$CLUSTERCODE_REPOSITORY" "$workspace"
cd "$workspace"
# Started as root (with a `runner` user), the agent runs each command as runner, with no
# capabilities and no way to gain any, so no command can read the agent's /proc entries.
if [[ "$(id -u)" == 0 ]] && id runner >/dev/null 2>&1; then
  chown -R runner:runner "$workspace"
  export CLUSTERCODE_COMMAND_SANDBOX=setpriv:runner
fi
# The agent reads its token on stdin: it is not in the environment commands could find.
token="$CLUSTERCODE_DEVBOX_TOKEN"
unset CLUSTERCODE_DEVBOX_TOKEN
exec clustercode devbox --api "$CLUSTERCODE_API_URL" --devbox "$CLUSTERCODE_DEVBOX_ID" --token-stdin <<<"$token"
