"""Decoding API responses into models: eager (`wire.JsonDecoder`) or lazy
(`lazy_decoder.LazyDecoder`, building `lazy` models that validate on first access), JSON list
bodies (`json_list`) and protobuf (`protobuf/`).
"""
