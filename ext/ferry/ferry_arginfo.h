/* Written by hand (no gen_stub.php at build time); README.md documents each signature. */

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_request_begin, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_request_end, 0, 0, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, defaultContentType, _IS_BOOL, 0, "true")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, poweredBy, _IS_BOOL, 0, "true")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_in_request, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_register_uploaded_file, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, path, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_catch_exit, 0, 1, IS_LONG, 1)
	ZEND_ARG_TYPE_INFO(0, callback, IS_CALLABLE, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_frames_parse, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, buffer, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, offset, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, maxPayload, IS_LONG, 0, "67108864")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_frame_decode, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, bytes, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, maxPayload, IS_LONG, 0, "67108864")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_frame_encode, 0, 1, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, flags, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, options, IS_ARRAY, 0, "[]")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, payload, IS_STRING, 0, "\"\"")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, streamFlags, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_answer_frame, 0, 3, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, contextLength, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, payload, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_msgpack_unpack, 0, 3, IS_MIXED, 0)
	ZEND_ARG_TYPE_INFO(0, buffer, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(1, offset, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, length, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, base, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, flags, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, maxDepth, IS_LONG, 0, "512")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, extensions, IS_ARRAY, 0, "[]")
	ZEND_ARG_OBJ_INFO_WITH_DEFAULT_VALUE(0, ext, Closure, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_msgpack_unpack_message, 0, 2, IS_MIXED, 0)
	ZEND_ARG_OBJ_INFO(0, unpacker, Ferry\\MsgPack\\BufferUnpacker, 0)
	ZEND_ARG_TYPE_INFO(0, data, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_msgpack_pack, 0, 1, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, value, IS_MIXED, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, flags, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, depth, IS_LONG, 0, "0")
	ZEND_ARG_OBJ_INFO_WITH_DEFAULT_VALUE(0, other, Closure, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, classes, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_request_context, 0, 1, IS_ARRAY, 1)
	ZEND_ARG_TYPE_INFO(0, context, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_job_answer, 0, 3, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, context, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, body, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_frames_read, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, buffer, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, offset, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, maxPayload, IS_LONG, 0, "67108864")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_request_read, 0, 2, IS_OBJECT, 1)
	ZEND_ARG_TYPE_INFO(0, context, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, body, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_FUNCTION(ferry_request_begin);
ZEND_FUNCTION(ferry_request_end);
ZEND_FUNCTION(ferry_in_request);
ZEND_FUNCTION(ferry_register_uploaded_file);
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_http_serve, 0, 6, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, session, IS_OBJECT, 0)
	ZEND_ARG_OBJ_INFO(0, handler, Closure, 0)
	ZEND_ARG_TYPE_INFO(0, placeholder, IS_OBJECT, 0)
	ZEND_ARG_INFO(0, in)
	ZEND_ARG_INFO(0, out)
	ZEND_ARG_TYPE_INFO(0, read, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_output_install, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()

#define arginfo_ferry_output_begin arginfo_ferry_output_install

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_output_take, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_ferry_output_end arginfo_ferry_output_take

ZEND_FUNCTION(ferry_output_install);
ZEND_FUNCTION(ferry_output_begin);
ZEND_FUNCTION(ferry_output_take);
ZEND_FUNCTION(ferry_output_end);
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_fiber_serve, 0, 8, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, state, IS_OBJECT, 0)
	ZEND_ARG_TYPE_INFO(0, session, IS_OBJECT, 0)
	ZEND_ARG_OBJ_INFO(0, handler, Closure, 0)
	ZEND_ARG_INFO(0, in)
	ZEND_ARG_INFO(0, out)
	ZEND_ARG_TYPE_INFO(0, read, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, room, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, once, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_fiber_body, 0, 2, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, state, IS_OBJECT, 0)
	ZEND_ARG_TYPE_INFO(0, placeholder, IS_OBJECT, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_fiber_served, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_fiber_io_enable, 0, 2, IS_VOID, 0)
	ZEND_ARG_OBJ_INFO(0, await, Closure, 0)
	ZEND_ARG_OBJ_INFO(0, sleep, Closure, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_fiber_io_disable, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_fiber_io_turn, 0, 1, IS_VOID, 0)
	ZEND_ARG_OBJ_INFO(0, fiber, Fiber, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_http_parse_head, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, bytes, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, limits, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_http_decode_chunked, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, bytes, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, max_body, IS_LONG, 0, "0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, max_trailer, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_multipart_parse, 0, 3, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, contentType, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, body, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, limits, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_direct_serve, 0, 7, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, session, IS_OBJECT, 0)
	ZEND_ARG_OBJ_INFO(0, handler, Closure, 0)
	ZEND_ARG_TYPE_INFO(0, placeholder, IS_OBJECT, 0)
	ZEND_ARG_INFO(0, in)
	ZEND_ARG_TYPE_INFO(0, fd, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, limits, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, drain, _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_direct_answer, 0, 2, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, frames, IS_STRING, 0)
	ZEND_ARG_INFO(1, control)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_direct_answer_bytes, 0, 2, IS_STRING, 1)
	ZEND_ARG_TYPE_INFO(0, context, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, body, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, head, _IS_BOOL, 0, "false")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, http10, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_direct_poll_fd, 0, 2, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, fd, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO(0, limits, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_direct_poll, 0, 2, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, drain, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, room, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_direct_answer_to, 0, 2, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, frames, IS_STRING, 0)
	ZEND_ARG_INFO(1, control)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_direct_done, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, id, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_FUNCTION(ferry_direct_serve);
ZEND_FUNCTION(ferry_direct_poll_fd);
ZEND_FUNCTION(ferry_direct_poll);
ZEND_FUNCTION(ferry_direct_answer_to);
ZEND_FUNCTION(ferry_direct_done);
ZEND_FUNCTION(ferry_direct_answer);
ZEND_FUNCTION(ferry_direct_answer_bytes);
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_ferry_forwarded_client, 0, 4, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, trusted, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, peer, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, fields, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, host, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_FUNCTION(ferry_forwarded_client);
ZEND_FUNCTION(ferry_catch_exit);
ZEND_FUNCTION(ferry_frames_parse);
ZEND_FUNCTION(ferry_frame_decode);
ZEND_FUNCTION(ferry_frame_encode);
ZEND_FUNCTION(ferry_answer_frame);
ZEND_FUNCTION(ferry_msgpack_unpack);
ZEND_FUNCTION(ferry_msgpack_pack);
ZEND_FUNCTION(ferry_msgpack_unpack_message);
ZEND_FUNCTION(ferry_request_context);
ZEND_FUNCTION(ferry_job_answer);
ZEND_FUNCTION(ferry_frames_read);
ZEND_FUNCTION(ferry_request_read);
ZEND_FUNCTION(ferry_http_serve);
ZEND_FUNCTION(ferry_fiber_serve);
ZEND_FUNCTION(ferry_fiber_body);
ZEND_FUNCTION(ferry_fiber_served);
ZEND_FUNCTION(ferry_fiber_io_enable);
ZEND_FUNCTION(ferry_fiber_io_disable);
ZEND_FUNCTION(ferry_fiber_io_turn);
ZEND_FUNCTION(ferry_http_parse_head);
ZEND_FUNCTION(ferry_http_decode_chunked);
ZEND_FUNCTION(ferry_multipart_parse);

/* ZEND_NS_FENTRY, not ZEND_RAW_FENTRY: PHP 8.4 added two arguments to the latter. */
#define FERRY_FE(name) ZEND_NS_FENTRY(PHP_FERRY_NS, name, zif_ferry_##name, arginfo_ferry_##name, 0)

static const zend_function_entry ferry_functions[] = {
	FERRY_FE(request_begin)
	FERRY_FE(request_end)
	FERRY_FE(in_request)
	FERRY_FE(register_uploaded_file)
	FERRY_FE(catch_exit)
	FERRY_FE(frames_parse)
	FERRY_FE(frame_decode)
	FERRY_FE(frame_encode)
	FERRY_FE(answer_frame)
	FERRY_FE(msgpack_unpack)
	FERRY_FE(msgpack_pack)
	FERRY_FE(msgpack_unpack_message)
	FERRY_FE(request_context)
	FERRY_FE(job_answer)
	FERRY_FE(frames_read)
	FERRY_FE(request_read)
	FERRY_FE(http_serve)
	FERRY_FE(output_install)
	FERRY_FE(output_begin)
	FERRY_FE(output_take)
	FERRY_FE(output_end)
	FERRY_FE(fiber_serve)
	FERRY_FE(fiber_body)
	FERRY_FE(fiber_served)
	FERRY_FE(fiber_io_enable)
	FERRY_FE(fiber_io_disable)
	FERRY_FE(fiber_io_turn)
	FERRY_FE(http_parse_head)
	FERRY_FE(http_decode_chunked)
	FERRY_FE(multipart_parse)
	FERRY_FE(direct_serve)
	FERRY_FE(direct_poll_fd)
	FERRY_FE(direct_poll)
	FERRY_FE(direct_answer_to)
	FERRY_FE(direct_done)
	FERRY_FE(direct_answer)
	FERRY_FE(direct_answer_bytes)
	FERRY_FE(forwarded_client)
	ZEND_FE_END
};
