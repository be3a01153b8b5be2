// exports.js - the C functions the wasm core exports, listed once: build.sh hands this list to
// emcc (-sEXPORTED_FUNCTIONS, every build), and load.js refuses a module that lacks any of them.
// attn_forward is not called by this wrapper but is kept for hosts that call the C directly
// (bench/tiny.js); attn_forward_naive and attn_matmul stay in the C API (c_src/attention.h)
// for C users and the tests, not in the wasm. The module also exports `memory` and
// `_initialize` (-sSTANDALONE_WASM), which load.js checks beside these.
export const WASM_FUNCTIONS = Object.freeze([
  'malloc', 'free',
  'attn_status_string', 'attn_default_scale',
  'attn_forward', 'attn_forward_rows', 'attn_workspace_size',
  'attn_self_forward',
  'attn_mha_forward', 'attn_mha_workspace_size',
  'attn_rope',
]);

// The model build (web/wasm/attention-model.wasm: c_src/gpt2.c, linear.c, llama.c and bert.c beside
// the core): what web/model/runtime.js and the families (web/model/families/) call, LLaMA's RoPE
// frequencies among them (c_src/rope.c). Its own list: the three builds above have none of the models.
export const WASM_MODEL_FUNCTIONS = Object.freeze([
  'malloc', 'free',
  'attn_status_string', 'attn_first_non_finite', 'attn_panel8', 'attn_cache_move',
  'attn_row_bytes', 'attn_dtype_block',
  'attn_gpt2_param_layout', 'attn_gpt2_check_params', 'attn_gpt2_pack_scratch_size', 'attn_gpt2_pack',
  'attn_gpt2_cache_size', 'attn_gpt2_workspace_size', 'attn_gpt2_forward',
  'attn_llama_check', 'attn_llama_cache_size', 'attn_llama_workspace_size', 'attn_llama_forward',
  'attn_rope_frequencies',
  'attn_bert_check', 'attn_bert_workspace_size', 'attn_bert_forward',
  'attn_heads_keep_floats', 'attn_heads_map', 'attn_heads_map_floats',
  'attn_set_threads', 'attn_run_part',
]);
