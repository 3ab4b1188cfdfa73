"""A tiny, randomly initialised Qwen2.5-VL checkpoint built locally (no download).

Used by ``test_hf.py`` and by ``gpu_check_hf.py`` when no real checkpoint is given. The
tokenizer is a byte-level BPE trained on a few words with the special tokens Qwen2.5-VL's
inputs need; the image processor keeps images to at most 16 merged patches; the model has two
64-wide text layers and one 32-wide vision block (~0.1 M parameters). The weights are random,
so generated text is noise: tests check structure, token counts and determinism, not words.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|image_pad|>", "<|video_pad|>",
)

# The Qwen2.5-VL chat layout, reduced to what the tests need: text and image items.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

PATCH = 14
MERGE = 2


def build_tiny_qwen(folder: Path, *, seed: int = 0) -> Path:
    """Write a tiny random Qwen2.5-VL (model, tokenizer, image processor) into ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
    )
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )

    folder.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=list(SPECIAL_TOKENS), show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(
        ["user assistant system what is written in the image? answer the question"] * 4, trainer
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
    )
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    image_processor = Qwen2VLImageProcessorPil(
        min_pixels=(PATCH * MERGE) ** 2 * 4, max_pixels=(PATCH * MERGE) ** 2 * 16,
        patch_size=PATCH, merge_size=MERGE, temporal_patch_size=2,
    )
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tokenizer), "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
            "max_position_embeddings": 1024,
            # head_dim 32: the three rotary sections (time, height, width) sum to 16.
            "rope_parameters": {"rope_type": "default", "mrope_section": [4, 6, 6],
                                "rope_theta": 10000.0},
            "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
            "out_hidden_size": 64, "patch_size": PATCH, "spatial_merge_size": MERGE,
            "temporal_patch_size": 2, "window_size": PATCH * MERGE * 2,
            "fullatt_block_indexes": [0],
        },
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config)
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    image_processor.save_pretrained(folder)
    return folder

