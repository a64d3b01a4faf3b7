"""The API's vocabulary shared by every layer (apimachinery's counterpart): the model base and
Status (`model`), Time/MicroTime (`timestamps`), resources and GVRs (`resource`), Status
errors (`errors`), and the list/watch contract between a source and the reflector
(`listwatch`).
"""
