# bash completion for teamrun (urfave/cli's bash_autocomplete, named for teamrun).
# Install: source <(teamrun completion bash)   (e.g. in ~/.bashrc)

# Macs have bash3 for which the bash-completion package doesn't include
# _init_completion. This is a minimal version of that function.
_teamrun_init_completion() {
  COMPREPLY=()
  _get_comp_words_by_ref "$@" cur prev words cword
}

_teamrun_bash_autocomplete() {
  if [[ "${COMP_WORDS[0]}" != "source" ]]; then
    local cur opts base words cword requestComp
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    if declare -F _init_completion >/dev/null 2>&1; then
      _init_completion -n "=:" || return
    elif declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
      _teamrun_init_completion -n "=:" || return
    else
      words=("${COMP_WORDS[@]}")
      cword=$COMP_CWORD
    fi
    words=("${words[@]:0:$cword}")
    if [[ "$cur" == "--" ]]; then
      # "--" itself would end the flags: ask for them all, compgen keeps the long ones.
      requestComp="${words[*]} - --generate-bash-completion"
    elif [[ "$cur" == "-"* ]]; then
      requestComp="${words[*]} ${cur} --generate-bash-completion"
    else
      requestComp="${words[*]} --generate-bash-completion"
    fi
    opts=$(eval "${requestComp}" 2>/dev/null)
    COMPREPLY=($(compgen -W "${opts}" -- ${cur}))
    return 0
  fi
}

complete -o bashdefault -o default -F _teamrun_bash_autocomplete teamrun
