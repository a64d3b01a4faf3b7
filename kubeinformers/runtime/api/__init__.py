"""The API's vocabulary every layer shares (apimachinery's counterpart): the model base and
Status (`model`), Time/MicroTime (`timestamps`), resources and GVRs (`resource`), Status
errors (`errors`), the field reader (`fields`), object keys, tombstones and metadata accessors
(`keys`), and the list/watch contract between a source and the reflector (`listwatch`).
"""
