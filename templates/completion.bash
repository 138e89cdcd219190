# bash completion for torchfix: `torchfix completions bash` prints this file,
# and packages install it as share/bash-completion/completions/torchfix.
# The words come from the binary (`torchfix __complete WORD...`), which reads
# them from its command definitions: commands, options, --gpu names.
# "--gpu=RT": bash splits at the "=" of COMP_WORDBREAKS ("--gpu" "=" "RT",
# or "--gpu" "=" while the cursor is on the "="), so the word is joined again
# for the binary, which answers "--gpu=RTX 5090", and the part before the
# word bash replaces is cut from each answer.
_torchfix() {
  local cur=${COMP_WORDS[COMP_CWORD]} line cut=0 n=$((COMP_CWORD - 1))
  cur=${cur//\\/}
  cur=${cur//\"/}
  cur=${cur//\'/}
  local before=${COMP_WORDS[COMP_CWORD - 1]}
  if [[ $cur == = && $before == --* ]]; then
    cut=${#before} cur=$before= n=$((n - 1))
  elif [[ $before == = && $COMP_CWORD -ge 3 && ${COMP_WORDS[COMP_CWORD - 2]} == --* ]]; then
    cur=${COMP_WORDS[COMP_CWORD - 2]}=$cur cut=$((${#COMP_WORDS[COMP_CWORD - 2]} + 1)) n=$((n - 2))
  fi
  COMPREPLY=()
  while IFS= read -r line; do
    line=${line%%$'\t'*}
    COMPREPLY+=("$(printf '%q' "${line:cut}")")
  done < <(command "${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:n}" "$cur" 2>/dev/null)
}
# No words from torchfix (a FILE, a PATH): bash completes file names.
complete -o default -F _torchfix torchfix
