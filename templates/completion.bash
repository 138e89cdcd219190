# bash completion for torchfix: `torchfix completions bash` prints this file,
# and packages install it as share/bash-completion/completions/torchfix.
# The words come from the binary (`torchfix __complete WORD...`), which reads
# them from its command definitions: commands, options, --gpu names.
_torchfix() {
  local cur=${COMP_WORDS[COMP_CWORD]} line
  cur=${cur//\\/}
  cur=${cur//\"/}
  cur=${cur//\'/}
  COMPREPLY=()
  while IFS= read -r line; do
    COMPREPLY+=("$(printf '%q' "${line%%$'\t'*}")")
  done < <(command "${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null)
}
# No words from torchfix (a FILE, a PATH): bash completes file names.
complete -o default -F _torchfix torchfix
