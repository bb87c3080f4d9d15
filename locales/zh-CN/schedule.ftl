# 服务在一个门店的每周排班（admin/slots/schedule.html）：生成时段的规则、替换规则的表单，以及保存的结果。

rules-title = 排班 · { $code }
rules-weekly-of = 每周排班：
rules-week-grid = 周视图
# 规则的星期代码（MON…SUN）显示为星期几；表单的值仍为代码。
rules-weekday = { $day ->
    [MON] 周一
    [TUE] 周二
    [WED] 周三
    [THU] 周四
    [FRI] 周五
    [SAT] 周六
    [SUN] 周日
   *[other] { $day }
}
# 同一条规则的各天之间（“周一、周二”）。
rules-day-sep = {"、"}

rules-saved = 排班已保存
rules-report = 未来 { $days } 天内：新生成 { $created } 个时段，删除 { $removed } 个，{ $changed } 个时段的名额有变化。
rules-kept-edited = 以下 { $n } 个时段的名额是手动设置的，保持不变；如需按新排班调整，请在时段页面修改：
rules-kept-booked = 以下 { $n } 个时段已不在排班中，但已有顾客预约，因此予以保留。请先致电通知顾客，再逐个取消预约或停约时段：
rules-n-booked = 已约 { $n } 人

rules-current = 当前规则
rules-none = 还没有排班规则：该服务在本门店没有按排班生成的时段。请在下方添加第一条规则。
rules-days = 星期
rules-opens = 开始
rules-closes = 结束
rules-slot-minutes = 时段（分钟）
rules-places-per-slot = 每个时段名额

rules-change = 修改排班
rules-change-explain = 保存后，该服务在本门店的全部排班规则都会被替换。新规则不再生成的空闲时段会被删除；已有预约的时段会保留，并在此列出。填写最后一行可添加规则；勾选“删除”可移除规则。
rules-anyone = 不指定员工
rules-remove = 删除
rules-save = 保存排班
# 前后包着指向员工页面的链接（sched-tab-staff）。
rules-staff-hint-lead = 如需为员工单独安排时段，请先在
rules-staff-hint-tail = 页面添加员工。

# 排班编辑器（issue 19）：每个星期一行、每天可有多个营业时段、复制某天、保存前预览。
rules-change-explain-2 = 每个星期一行。每天可以有多个营业时段（午休即分为两段）；填写空白时段即可添加，勾选“删除”即可移除。“预览变更”会列出保存后将新增、删除或保留的时段；点击保存前不会写入任何内容。
rules-day-closed = 休息
rules-copy-day = 将{ $day }复制到…
rules-copy = 复制
rules-copied = 已将{ $from }复制到{ $to }。尚未保存：请预览或保存。
rules-preview = 预览变更
rules-preview-title = 保存后将会
rules-preview-counts = 未来 { $days } 天内：新增 { $created } 个时段，删除 { $removed } 个，{ $changed } 个名额变化，{ $unchanged } 个不变。
rules-preview-none = 保存不会改变任何时段。
rules-preview-date = 日期
rules-preview-created = 新增
rules-preview-removed = 删除
rules-preview-changed = 名额变化
rules-kept-full = 以下 { $n } 个时段已约人数超过新的名额，保留原名额：
rules-kept-closed = 以下 { $n } 个时段已不在排班中，但仍有候补、过往预约或对账记录引用，因此保留为已关闭状态，不可预约：
rules-kept-booked-preview = 以下 { $n } 个时段将不在排班中，但已有预约，因此会保留。
rules-kept-edited-preview = 以下 { $n } 个时段的名额是手动设置的，会保持不变。
rules-range-staff = 员工
rules-invalid-line = 未指定星期的规则

over-title = 特殊日期
over-explain = 在这些日期不使用每周营业时间：节假日不开放，或活动日使用单独的时间。删除特殊日期后恢复每周营业时间。已有预约的时段不会被删除，会列出供处理。
over-none = 近期没有特殊日期。
over-closed = 不开放
over-remove = 删除
over-add = 添加特殊日期
over-kind-closed = 当天不开放（节假日）
over-kind-hours = 当天使用以下时间：
over-add-submit = 添加
over-range = { $opens }–{ $closes } · { $minutes } 分钟 · { $capacity } 个名额

oneoff-title = 添加单次时段
oneoff-explain = 每周营业时间之外的时段，例如特别场次。如果该员工在此时间已有开放的时段，将无法添加。
oneoff-time = 开始时间
oneoff-minutes = 时长（分钟）
oneoff-submit = 添加时段

week-services-paged = 本门店共有 { $n } 项服务，日程表每次显示其中 { $per } 项。在上方选择一项服务，只看它的时段。
schedules-title = 营业时间
schedules-explain = 本门店各项服务的每周营业时间。顾客可预约的时段按此在预约期内生成；特殊日期可单独调整某一天。
schedules-none = 还没有服务：请先创建类型为“服务”的商品。
schedules-count = 共 { $n } 项服务
schedules-no-rules = 尚未设置营业时间
schedules-edit = 编辑时间
schedules-overrides = 近期有 { $n } 个特殊日期
schedules-service = 服务
schedules-hours = 营业时间

# 待联系列表（issue 19）：停约时段中的预约，以及谁联系了谁。
sched-tab-to-call = 待联系
tocall-title = 待联系的预约
tocall-explain = 所有处于停约时段、尚未进行的预约。请致电顾客并记录沟通内容，然后将预约改到其他时间或取消。预约被改期、取消，或时段重新开放、结束后，会自动从列表中移除。
tocall-show-waiting = 尚未联系（{ $n }）
tocall-show-all = 全部（{ $n }）
tocall-none = 无需联系：没有预约处于停约时段。
tocall-everyone-reached = 列表中的顾客均已联系。“全部”可查看他们及备注。
tocall-reached-by = 已由 { $who } 联系，{ $when }
tocall-not-reached = 尚未联系
tocall-note-example = 例如：已改到周四，顾客会回电
tocall-mark-reached = 已联系
tocall-save-note = 保存备注
tocall-undo = 改为未联系
dash-to-call = { $n } 个停约时段中的预约尚待联系
sched-slot-to-call = 待联系 { $n } 人
sched-closed-call = 已停约 · 待联系

# 预约列表（issue 19）：全部预约，可搜索、筛选、导出 CSV。
sched-tab-bookings = 预约列表
blist-title = 全部预约
blist-when = { $when ->
    [past] 已过去
    [cancelled] 已取消
   *[upcoming] 即将到来
}
blist-search = 姓名、电话或预约号
blist-search-example = 例如：林、1380013 或 K7Q2M9XR4T
blist-all-services = 全部服务
blist-all-staff = 全部员工
blist-apply = 查看
blist-csv = 下载 CSV
blist-none = { $when ->
    [past] 本门店还没有已过去的预约。
    [cancelled] 没有已取消的预约。
   *[upcoming] 没有即将到来的预约。顾客可在门店预约页面预约。
}
blist-none-matching = 所有分类中都没有匹配的预约。可按姓名的一部分、电话号码数字或预约号搜索。
blist-none-here = { $when ->
    [past] 已过去的预约中没有匹配项。
    [cancelled] 已取消的预约中没有匹配项。
   *[upcoming] 即将到来的预约中没有匹配项。
} 在这里找到：
blist-found-in = { $when ->
    [past] 已过去 { $n } 条
    [cancelled] 已取消 { $n } 条
   *[upcoming] 即将到来 { $n } 条
}
blist-jump = 页码
blist-sort = 排序
blist-sort-default = 时间最近的在前（过去的：最新的在前）
blist-sort-desc = 倒序
sched-marked-auto = 系统自动标记
sched-marked-by = 由 { $who } 标记
rules-buffer = 时段后间隔（分钟）
rules-length-changed = { $n } 个无人预约的时段将改为新的时段长度。
rules-blocked = { $n } 个时间不会开放：同一人员在该时间已有保留的时段（已有预约或手动创建）。
rules-unused-tail = 最后 { $minutes } 分钟（从 { $from } 起）不足一个完整时段，将空着不用。可调整结束时间或时段长度。
rules-created-closed = 新时段中有 { $n } 个因停约（请假）而立即处于停约状态。
week-override-closed = { $sku }：当天不开放（特殊日期）
week-override-hours = { $sku }：当天时间特殊（特殊日期）
tocall-save-note-only = 仅保存备注（未联系上）

# Staff book for a caller or a walk-in (issue 54).
book-staff-title = 代客预约
book-staff-back = 返回
book-staff-choose = 选择时段…
book-staff-channel = 来源
book-channel = { $channel ->
    [PHONE] 电话预约
    [WALK_IN] 到店
   *[other] 线上
}
book-taken-by = { $channel ->
    [PHONE] 电话预约，{ $who } 代约
    [WALK_IN] 到店，{ $who } 代约
   *[other] 线上
}
book-staff-submit = 预约
book-staff-confirm-notice = 线上预约需提前 { $minutes } 分钟，仍要预约
book-staff-not-saved = 未预约：请检查下方标出的字段。
book-staff-no-slots = 目前没有可预约的时段：所有时段都已开始、已关闭或被冻结。
book-staff-offer-wait = 该时段已满。可将顾客加入候补：有空位时按顺序自动为其预约。
book-staff-add-to-wait = 加入候补
